package artifact

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/client/taskuser"
	"github.com/drover-sched/drover/structs"
)

// A sibling task swaps a directory of the destination for a symlink out
// of the alloc dir while the download is under way: the client, which
// places the artifact as root, must not follow it.
func TestASymlinkPlantedDuringTheDownloadIsNotFollowed(t *testing.T) {
	for _, c := range []struct {
		name, dest, mode string
	}{
		{"file into a swapped directory", "../alloc/data/d/tool", ModeFile},
		{"file into a directory under a swapped one", "../alloc/data/d/sub/tool", ModeFile},
		{"merge into a swapped directory", "../alloc/data/d", ModeDir},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			body, mode := []byte("#!/bin/sh\n"), c.mode
			path := "/tool"
			if mode == ModeDir {
				body, path = tarGz(t, entry{name: "tool", body: "#!/bin/sh\n"}), "/tool.tgz"
			}
			started, release := make(chan struct{}), make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				close(started)
				<-release
				_, _ = w.Write(body)
			}))
			t.Cleanup(srv.Close)
			d := filepath.Join(f.alloc.SharedDir, "data", "d")
			if err := os.Mkdir(d, 0o755); err != nil { // a real directory when the fetch starts
				t.Fatal(err)
			}
			outside := t.TempDir()
			done := make(chan error, 1)
			go func() {
				done <- f.fetch(nil, &structs.TaskArtifact{GetterSource: srv.URL + path, RelativeDest: c.dest, GetterMode: mode}, nil)
			}()
			select {
			case <-started:
			case <-time.After(10 * time.Second):
				t.Fatal("the download never started")
			}
			if err := os.Remove(d); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, d); err != nil {
				t.Fatal(err)
			}
			close(release)
			err := <-done
			if !errors.Is(err, allocdir.ErrSymlink) || IsRecoverable(err) {
				t.Fatalf("err = %v, want a final ErrSymlink", err)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Fatalf("the artifact was written through the symlink: %v", entries)
			}
		})
	}
}

// A symlink at a name the artifact replaces is replaced, not written
// through.
func TestASymlinkAtTheDestinationNameIsReplaced(t *testing.T) {
	f := newFixture(t)
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.task.LocalDir, "a.txt")); err != nil {
		t.Fatal(err)
	}
	if err := f.fetch(nil, &structs.TaskArtifact{GetterSource: f.url("/a.txt", []byte("new"))}, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep" {
		t.Fatalf("the symlink's target was written: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(f.task.LocalDir, "a.txt")); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("local/a.txt is not the fetched file: %v %v", fi, err)
	}
}

// The client's own places are no destination: a job cannot forge the
// markers that say an artifact was fetched, nor write the alloc's logs.
func TestTheClientsOwnPlacesAreRefusedAsDestinations(t *testing.T) {
	f := newFixture(t)
	src := f.url("/a.txt", []byte("a"))
	for _, dest := range []string{".artifacts", ".artifacts/0-abc", "../alloc/logs", ".artifact-x/y"} {
		err := f.fetch(nil, &structs.TaskArtifact{GetterSource: src, RelativeDest: dest}, nil)
		if !errors.Is(err, allocdir.ErrReserved) || IsRecoverable(err) {
			t.Fatalf("%s: err = %v, want a final ErrReserved", dest, err)
		}
	}
	if n := f.requestCount(); n != 0 {
		t.Fatalf("%d requests for refused destinations", n)
	}
}

// chown = true gives the files to the ids the task runner resolved for
// the task's user, the driver's, even where the host does not know the
// name.
func TestChownUsesTheResolvedOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	f := newFixture(t)
	req := Request{Artifact: &structs.TaskArtifact{GetterSource: f.url("/a.txt", []byte("a")), Chown: true},
		AllocDir: f.alloc, TaskDir: f.task.Dir, User: "drover-no-such-host-user", Owner: &taskuser.User{UID: 4242, GID: 4243}}
	fe := &Fetcher{Sources: Sources{AllowedHosts: []HostRule{mustRule(t, "127.0.0.1")}}}
	if err := fe.Fetch(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(f.task.LocalDir, "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 4242 || st.Gid != 4243 {
		t.Fatalf("a.txt is %d:%d, want 4242:4243", st.Uid, st.Gid)
	}
}
