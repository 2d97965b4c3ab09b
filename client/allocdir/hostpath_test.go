package allocdir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestHostPathStaysInTheAllocDir(t *testing.T) {
	a := fsFixture(t)
	root, err := filepath.EvalSymlinks(a.Root)
	if err != nil {
		t.Fatal(err)
	}
	// A dangling link that points out: writing through it would create
	// its target outside.
	if err := os.Symlink("/nonexistent-drover-test", filepath.Join(a.Task("web").LocalDir, "dangling-out")); err != nil {
		t.Fatal(err)
	}
	ok := map[string]string{
		"web/local/new/dir/file": "web/local/new/dir/file",
		"web/local/inside-link":  "web/local/inside-link",
		"web/secrets/token":      "web/secrets/token",
		"/alloc/data":            "alloc/data",
		"web/../alloc/data/x":    "alloc/data/x",
		".":                      "",
	}
	for p, want := range ok {
		got, err := a.HostPath(p)
		if err != nil || got != filepath.Join(root, want) {
			t.Errorf("HostPath(%q) = %q, %v; want %q", p, got, err, filepath.Join(root, want))
		}
	}
	for _, p := range []string{"..", "web/../../x", "web/local/abs-out", "web/local/abs-out/below/x", "web/local/rel-out/x", "web/local/dangling-out"} {
		if got, err := a.HostPath(p); !errors.Is(err, ErrPathEscapes) {
			t.Errorf("HostPath(%q) = %q, %v; want ErrPathEscapes", p, got, err)
		}
	}
}
