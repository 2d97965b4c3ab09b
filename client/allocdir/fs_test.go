package allocdir

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fsFixture builds an alloc dir with a file, a FIFO and symlinks in and
// out of it, next to a secret outside it.
func fsFixture(t *testing.T) *AllocDir {
	t.Helper()
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("do not read"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := New(filepath.Join(base, "allocs"), "a1")
	if err := a.Build([]string{"web"}); err != nil {
		t.Fatal(err)
	}
	local := a.Task("web").LocalDir
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(local, "hello.txt"), []byte("hello, alloc\n"), 0o644))
	must(os.Symlink("hello.txt", filepath.Join(local, "inside-link")))
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(local, "abs-out")))
	must(os.Symlink("../../../../outside", filepath.Join(local, "rel-out")))
	must(unix.Mkfifo(filepath.Join(a.LogDir, ".web.stdout.fifo"), 0o600))
	return a
}

func TestListShowsEntriesSortedAndAsTheyAre(t *testing.T) {
	a := fsFixture(t)
	for _, root := range []string{"", "/", ".", "web/.."} {
		got, err := a.List(root)
		if err != nil {
			t.Fatalf("List(%q): %v", root, err)
		}
		var names []string
		for _, fi := range got {
			names = append(names, fi.Name)
		}
		if strings.Join(names, ",") != "alloc,web" || !got[0].IsDir {
			t.Fatalf("List(%q) = %v", root, got)
		}
	}
	got, err := a.List("/web/local")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]fs.FileMode{"abs-out": fs.ModeSymlink, "hello.txt": 0, "inside-link": fs.ModeSymlink, "rel-out": fs.ModeSymlink}
	if len(got) != len(want) {
		t.Fatalf("listed %+v", got)
	}
	for i, fi := range got {
		if fi.Mode.Type() != want[fi.Name] || (i > 0 && got[i-1].Name > fi.Name) {
			t.Fatalf("entry %d: %+v", i, fi)
		}
	}
	if got[1].Size != int64(len("hello, alloc\n")) {
		t.Fatalf("size %d", got[1].Size)
	}
}

func TestStatFollowsSymlinksThatStayInside(t *testing.T) {
	a := fsFixture(t)
	fi, err := a.Stat("web/local/inside-link")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Name != "hello.txt" || fi.IsDir || fi.Size != 13 || !strings.HasPrefix(fi.ContentType, "text/plain") || fi.Mode.String() != "-rw-r--r--" {
		t.Fatalf("stat %+v", fi)
	}
	fi, err = a.Stat("/")
	if err != nil || !fi.IsDir || fi.Name != "a1" || fi.ContentType != "" {
		t.Fatalf("stat of the root: %+v %v", fi, err)
	}
}

func TestOpenReadsRegularFilesOnly(t *testing.T) {
	a := fsFixture(t)
	f, err := a.Open("/web/local/hello.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "hello, alloc\n" {
		t.Fatalf("read %q", b)
	}
	if _, err := a.Open("web/local"); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "list it instead") {
		t.Fatalf("a directory: %v", err)
	}
	// A log FIFO is never opened: a reader would take the task's output.
	if _, err := a.Open("alloc/logs/.web.stdout.fifo"); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("a FIFO: %v", err)
	}
	if _, err := a.List("web/local/hello.txt"); !errors.Is(err, ErrNotDir) {
		t.Fatalf("listing a file: %v", err)
	}
	if _, err := a.Stat("web/nothing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}

func TestNoPathLeavesTheAllocDir(t *testing.T) {
	a := fsFixture(t)
	for _, p := range []string{"..", "../", "/..", "web/../..", "../outside/secret", "web/local/abs-out", "web/local/rel-out", "web/local/rel-out/secret"} {
		if _, err := a.Stat(p); !errors.Is(err, ErrPathEscapes) {
			t.Errorf("Stat(%q): %v, want ErrPathEscapes", p, err)
		}
		if _, err := a.Open(p); !errors.Is(err, ErrPathEscapes) {
			t.Errorf("Open(%q): %v, want ErrPathEscapes", p, err)
		}
		if _, err := a.List(p); !errors.Is(err, ErrPathEscapes) {
			t.Errorf("List(%q): %v, want ErrPathEscapes", p, err)
		}
	}
	// An absolute path is taken relative to the alloc dir, as Nomad's
	// tools mean it: it cannot name the host's files.
	if _, err := a.Stat("/etc/passwd"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("/etc/passwd: %v", err)
	}
}
