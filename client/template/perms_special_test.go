package template

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// TestRenderedFilesNeverCarrySetuidSetgidOrSticky: job validation refuses
// such perms, but a job stored before that rule (or one that reached the
// client another way) must still not make a setuid file: the client
// writes the permission bits only.
func TestRenderedFilesNeverCarrySetuidSetgidOrSticky(t *testing.T) {
	for _, chown := range []bool{false, true} {
		in, root := allocTree(t)
		in.Chown = chown && os.Geteuid() == 0
		uid, gid := 0, 0
		in.Templates = []*structs.Template{
			{EmbeddedTmpl: "a", DestPath: "local/setuid", Perms: "4755", Uid: &uid, Gid: &gid},
			{EmbeddedTmpl: "b", DestPath: "local/setgid", Perms: "2750"},
			{EmbeddedTmpl: "c", DestPath: "local/sticky", Perms: "1777"},
			{EmbeddedTmpl: "d", DestPath: "local/all", Perms: "7700"},
		}
		if _, err := Render(in); err != nil {
			t.Fatalf("chown=%v: %v", in.Chown, err)
		}
		want := map[string]os.FileMode{"setuid": 0o755, "setgid": 0o750, "sticky": 0o777, "all": 0o700}
		for name, perm := range want {
			fi, err := os.Stat(filepath.Join(root, "web/local", name))
			if err != nil {
				t.Fatal(err)
			}
			if special := fi.Mode() & (os.ModeSetuid | os.ModeSetgid | os.ModeSticky); special != 0 {
				t.Errorf("chown=%v: %s has %v set (mode %v)", in.Chown, name, special, fi.Mode())
			}
			if fi.Mode().Perm() != perm {
				t.Errorf("chown=%v: %s perms %v, want %v", in.Chown, name, fi.Mode().Perm(), perm)
			}
		}
	}
}
