package allocdir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestOpenDirFollowsNoSymlink(t *testing.T) {
	a := New(t.TempDir(), "a1")
	if err := a.Build([]string{"web"}); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	data := filepath.Join(a.SharedDir, "data")
	if err := os.Symlink(outside, filepath.Join(data, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../tmp", filepath.Join(data, "inside")); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"alloc/data/link", "alloc/data/link/new", "alloc/data/inside/new"} {
		if d, err := a.OpenDir(rel, true, 0o755); !errors.Is(err, ErrSymlink) || !errors.Is(err, ErrPathEscapes) {
			if d != nil {
				d.Close()
			}
			t.Fatalf("OpenDir(%s) = %v, want ErrSymlink", rel, err)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("created through a symlink: %v", entries)
	}
	if _, err := a.OpenDir("../x", true, 0o755); !errors.Is(err, ErrPathEscapes) {
		t.Fatalf("OpenDir(../x) = %v", err)
	}
	d, err := a.OpenDir("alloc/data/new/deeper", true, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if fi, err := os.Stat(filepath.Join(data, "new", "deeper")); err != nil || !fi.IsDir() {
		t.Fatalf("missing directories were not made: %v", err)
	}
}

func TestWriteAndRemoveAtDoNotFollowSymlinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	victimDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(victimDir, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"file": victim, "dir": victimDir} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := WriteFileAt(d, "file", []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Fatalf("written through the symlink: %q", b)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "file")); err != nil || string(b) != "new" {
		t.Fatalf("file = %q, %v", b, err)
	}
	if err := RemoveAllAt(d, "dir"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(victimDir, "f")); err != nil {
		t.Fatalf("removed through the symlink: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "dir")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the symlink itself is still there: %v", err)
	}
}

func TestReserved(t *testing.T) {
	for rel, want := range map[string]bool{
		"alloc/logs": true, "alloc/logs/web.stdout.0": true, "web/.artifacts": true, "web/.artifacts/0-ab": true,
		"web/.artifact-123/x": true, "alloc/data/logs": false, "web/local/.artifacts": false, "alloc": false,
		"web": false, "web/local": false, "alloc/data": false,
	} {
		if got := Reserved(rel); got != want {
			t.Errorf("Reserved(%q) = %v, want %v", rel, got, want)
		}
	}
}
