package template

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/structs"
)

// The finding: perms = "4755" with uid = 0 made a setuid-root file. No
// rendered file keeps a set-id or sticky bit, whoever owns it.
func TestRenderedFilesNeverKeepSetIDOrStickyBits(t *testing.T) {
	in, root := allocTree(t)
	in.Chown = os.Geteuid() == 0
	zero := 0
	in.Templates = []*structs.Template{
		{EmbeddedTmpl: "#!/bin/sh\n", DestPath: "local/suid", Perms: "4755", Uid: &zero, Gid: &zero},
		{EmbeddedTmpl: "x", DestPath: "local/sgid", Perms: "2755"},
		{EmbeddedTmpl: "x", DestPath: "local/sticky", Perms: "1777"},
		{EmbeddedTmpl: "x", DestPath: "local/all", Perms: "7777"},
	}
	if _, err := Render(in); err != nil {
		t.Fatal(err)
	}
	want := map[string]os.FileMode{"suid": 0o755, "sgid": 0o755, "sticky": 0o777, "all": 0o777}
	for name, perm := range want {
		fi, err := os.Stat(filepath.Join(root, "web/local", name))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Mode&(syscall.S_ISUID|syscall.S_ISGID|syscall.S_ISVTX) != 0 || fi.Mode().Perm() != perm {
			t.Errorf("%s: mode %#o, want %#o and no set-id or sticky bit", name, st.Mode&0o7777, perm)
		}
	}
}

// For a task run as another user, the files and the directories a render
// creates are that user's, and a template may not name another owner.
func TestTemplatesOfATaskRunAsAnotherUserAreThatUsers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	in, root := allocTree(t)
	in.Chown = true
	in.Owner = &Owner{UID: 65534, GID: 65534}
	in.Templates = []*structs.Template{{EmbeddedTmpl: "x", DestPath: "local/conf/d/app.conf"}}
	if _, err := Render(in); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"web/local/conf", "web/local/conf/d", "web/local/conf/d/app.conf"} {
		fi, err := os.Stat(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 || st.Gid != 65534 {
			t.Errorf("%s is %d:%d, want the task's 65534:65534", p, st.Uid, st.Gid)
		}
	}
	if fi, _ := os.Stat(filepath.Join(root, "web/local")); fi.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Errorf("a directory the render did not create changed owner")
	}

	zero := 0
	for _, tmpl := range []*structs.Template{
		{EmbeddedTmpl: "x", DestPath: "local/root-owned", Uid: &zero},
		{EmbeddedTmpl: "x", DestPath: "local/root-group", Gid: &zero},
	} {
		in.Templates = []*structs.Template{tmpl}
		_, err := Render(in)
		if err == nil || !strings.Contains(err.Error(), "is not the task's") {
			t.Errorf("a template owned by 0 for a task run as 65534: err = %v, want a refusal", err)
		}
		if _, serr := os.Lstat(filepath.Join(root, tmpl.DestPath)); serr == nil {
			t.Errorf("the refused template %s was written", tmpl.DestPath)
		}
	}
	same := 65534
	in.Templates = []*structs.Template{{EmbeddedTmpl: "x", DestPath: "local/own", Uid: &same, Gid: &same}}
	if _, err := Render(in); err != nil {
		t.Errorf("a template naming the task's own uid and gid: %v", err)
	}
}

// Directories a render makes outside the places the task writes (the
// task directory's root, alloc/) stay the client's, and the client's own
// places (artifact markers, alloc/logs) are refused outright, also when
// a symlink the task planted leads there.
func TestRendersNeverGiveTheTaskTheClientsPlaces(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	in, root := allocTree(t)
	in.Chown = true
	in.Owner = &Owner{UID: 65534, GID: 65534}
	in.Templates = []*structs.Template{
		{EmbeddedTmpl: "x", DestPath: "conf/app.conf"},
		{EmbeddedTmpl: "x", DestPath: "../alloc/shared/app.conf"},
		{EmbeddedTmpl: "x", DestPath: "../alloc/data/d/app.conf"},
	}
	if _, err := Render(in); err != nil {
		t.Fatal(err)
	}
	for p, uid := range map[string]uint32{"web/conf": 0, "alloc/shared": 0, "alloc/data/d": 65534, "web/conf/app.conf": 65534} {
		fi, err := os.Stat(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != uid {
			t.Errorf("%s is owned by %d, want %d", p, st.Uid, uid)
		}
	}
	must(t, os.Symlink("..", filepath.Join(root, "web/local/up")))
	for _, dest := range []string{".artifacts/0-abc", ".artifact-1/x", "../alloc/logs/web.stdout.0", "local/up/.artifacts/0-abc", ".artifacts"} {
		in.Templates = []*structs.Template{{EmbeddedTmpl: "x", DestPath: dest}}
		_, err := Render(in)
		if !errors.Is(err, allocdir.ErrReserved) {
			t.Errorf("%s: err = %v, want ErrReserved", dest, err)
		}
	}
	for _, p := range []string{"web/.artifacts", "web/.artifact-1", "alloc/logs/web.stdout.0"} {
		if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
			t.Errorf("%s was created", p)
		}
	}
}
