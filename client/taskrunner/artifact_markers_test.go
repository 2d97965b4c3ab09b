package taskrunner

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/structs"
)

// A marker planted as a symlink (to raft.db, say) is neither taken as
// "fetched" nor written through: recording the artifact replaces the
// link and leaves its target whole.
func TestArtifactMarkersFollowNoSymlink(t *testing.T) {
	dir := allocdir.New(t.TempDir(), structs.GenerateUUID())
	if err := dir.Build([]string{"t"}); err != nil {
		t.Fatal(err)
	}
	td := dir.Task("t")
	a := &structs.TaskArtifact{GetterSource: "http://example.com/a"}
	victim := filepath.Join(t.TempDir(), "raft.db")
	if err := os.WriteFile(victim, []byte("state"), 0o600); err != nil {
		t.Fatal(err)
	}
	marker := artifactMarker(td, 0, a)
	if err := os.MkdirAll(filepath.Dir(marker), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, marker); err != nil {
		t.Fatal(err)
	}
	if artifactFetched(td, 0, a) {
		t.Fatal("a symlink was taken for a marker")
	}
	if err := markArtifact(td, 0, a); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "state" {
		t.Fatalf("the marker's symlink target was written: %q", b)
	}
	if !artifactFetched(td, 0, a) {
		t.Fatal("the artifact is not recorded as fetched")
	}

	// The markers directory itself swapped for a symlink out.
	outside := t.TempDir()
	if err := os.RemoveAll(filepath.Dir(marker)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Dir(marker)); err != nil {
		t.Fatal(err)
	}
	if err := markArtifact(td, 0, a); !errors.Is(err, allocdir.ErrSymlink) {
		t.Fatalf("err = %v, want ErrSymlink", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("a marker was written through the symlink: %v", entries)
	}
}
