package executor

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/drover-sched/drover/client/drivers"
)

func TestMakeExecutableTouchesOnlyFilesInsideTheAllocDir(t *testing.T) {
	alloc, outside := t.TempDir(), t.TempDir()
	taskDir := filepath.Join(alloc, "web")
	if err := os.MkdirAll(filepath.Join(taskDir, "local"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path string) string {
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o640); err != nil {
			t.Fatal(err)
		}
		return path
	}
	inside := write(filepath.Join(taskDir, "local", "tool"))
	host := write(filepath.Join(outside, "hostprog"))
	link := filepath.Join(taskDir, "local", "link")
	if err := os.Symlink(host, link); err != nil {
		t.Fatal(err)
	}
	cfg := &drivers.TaskConfig{AllocDir: alloc, TaskDir: taskDir}
	for _, p := range []string{inside, host, link, filepath.Join(taskDir, "missing")} {
		if err := makeExecutable(p, cfg); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	mode := func(p string) os.FileMode {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	if got := mode(inside); got != 0o751 {
		t.Fatalf("inside: %v, want 0751", got)
	}
	if got := mode(host); got != 0o640 {
		t.Fatalf("a host file outside the alloc dir (directly or through a link) changed to %v", got)
	}
}

// A FIFO or a link out of the alloc dir at the command's path is left
// alone, and does not hold the start.
func TestMakeExecutableIgnoresFIFOsAndEscapingLinks(t *testing.T) {
	alloc, outside := t.TempDir(), t.TempDir()
	host := filepath.Join(outside, "hostprog")
	if err := os.WriteFile(host, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(alloc, "fifo")
	if err := syscall.Mkfifo(fifo, 0o640); err != nil {
		t.Fatal(err)
	}
	rel := filepath.Join(alloc, "rel")
	if err := os.Symlink("../"+filepath.Base(outside)+"/hostprog", rel); err != nil {
		t.Fatal(err)
	}
	cfg := &drivers.TaskConfig{AllocDir: alloc}
	for _, p := range []string{fifo, rel} {
		if err := makeExecutable(p, cfg); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	for _, p := range []string{fifo, host} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o640 {
			t.Fatalf("%s changed: %v %v", p, fi.Mode(), err)
		}
	}
}
