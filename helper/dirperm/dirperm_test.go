package dirperm

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestEnsureCreatesWithTheModeWhateverTheUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	t.Cleanup(func() { syscall.Umask(old) })
	dir := filepath.Join(t.TempDir(), "a", "client")
	if err := Ensure(dir, Traverse); err != nil {
		t.Fatal(err)
	}
	if got := mode(t, dir); got != Traverse {
		t.Fatalf("mode %#o, want %#o", got, Traverse)
	}
}

func TestEnsureTightensAnExistingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "server")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := Ensure(dir, Private); err != nil {
		t.Fatal(err)
	}
	if got := mode(t, dir); got != Private {
		t.Fatalf("mode %#o, want %#o", got, Private)
	}
}

func TestEnsureRefusesASymlink(t *testing.T) {
	base := t.TempDir()
	target := filepath.Join(base, "elsewhere")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "client")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	err := Ensure(link, Private)
	if err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("err = %v, want a refusal naming the path", err)
	}
	if got := mode(t, target); got != 0o755 {
		t.Fatalf("the symlink's target was changed to %#o", got)
	}
}

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky)
}
