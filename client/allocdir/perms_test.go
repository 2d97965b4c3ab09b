package allocdir

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

const (
	nobody = 65534
	daemon = 1 // another unprivileged user, for a sibling task
)

// asUser runs a shell command as uid:uid and reports whether it worked.
func asUser(t *testing.T, uid int, script string) bool {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	return cmd.Run() == nil
}

// A task run as nobody reaches its own directories and the alloc's shared
// data and tmp, and nothing else: not the logs the client writes, not a
// sibling task's directories, not a listing of the alloc.
func TestATaskUserReachesItsOwnDirectoriesAndNothingElse(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run commands as other users")
	}
	base := t.TempDir()
	// t.TempDir's parents are 0700; a data dir's are not.
	if err := os.Chmod(filepath.Dir(base), 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o711); err != nil {
		t.Fatal(err)
	}
	a := New(base, "a1")
	if err := a.Build([]string{"web", "side"}); err != nil {
		t.Fatal(err)
	}
	web, side := a.Task("web"), a.Task("side")
	if err := web.Chown(nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := side.Chown(daemon, daemon); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(a.LogDir, "web.stdout.0"), []byte("log"), 0o644); err != nil {
		t.Fatal(err)
	}

	may := map[string]string{
		"write local/":        "echo x > " + filepath.Join(web.LocalDir, "f"),
		"write secrets/":      "echo x > " + filepath.Join(web.SecretsDir, "f"),
		"write tmp/":          "echo x > " + filepath.Join(web.TmpDir, "f"),
		"write alloc/data/":   "echo x > " + filepath.Join(a.SharedDir, "data", "f"),
		"write alloc/tmp/":    "echo x > " + filepath.Join(a.SharedDir, "tmp", "f"),
		"read its own logs":   "cat " + filepath.Join(a.LogDir, "web.stdout.0"),
		"enter its task dir":  "cd " + web.Dir,
		"list its local dir":  "ls " + web.LocalDir,
		"enter the alloc dir": "cd " + a.Root,
	}
	for what, script := range may {
		if !asUser(t, nobody, script) {
			t.Errorf("the task's user cannot %s", what)
		}
	}
	mayNot := map[string]string{
		"write alloc/logs/":          "echo x > " + filepath.Join(a.LogDir, "f"),
		"change a log file":          "echo x >> " + filepath.Join(a.LogDir, "web.stdout.0"),
		"list the alloc dir":         "ls " + a.Root,
		"list its task dir":          "ls " + web.Dir,
		"list the alloc base":        "ls " + base,
		"list a sibling's local/":    "ls " + side.LocalDir,
		"read a sibling's secrets/":  "ls " + side.SecretsDir,
		"write into a sibling's tmp": "echo x > " + filepath.Join(side.TmpDir, "f"),
		"make a dir in the task dir": "mkdir " + filepath.Join(web.Dir, "x"),
	}
	for what, script := range mayNot {
		if asUser(t, nobody, script) {
			t.Errorf("the task's user can %s", what)
		}
	}
}

// Build on an existing tree (a restarted client) restores the modes of
// the client's own directories and keeps what Chown gave the task.
func TestRebuildKeepsTheTaskOwnershipAndRestoresTheRest(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	a := New(t.TempDir(), "a1")
	if err := a.Build([]string{"web"}); err != nil {
		t.Fatal(err)
	}
	web := a.Task("web")
	if err := web.Chown(nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(a.LogDir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := a.Build([]string{"web"}); err != nil {
		t.Fatal(err)
	}
	if m := modeOf(t, a.LogDir); m != 0o755 {
		t.Errorf("logs mode %v after a rebuild, want 0755", m)
	}
	fi, err := os.Stat(web.LocalDir)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != nobody || fi.Mode().Perm() != 0o700 {
		t.Errorf("local/ is %d %v after a rebuild, want nobody 0700", st.Uid, fi.Mode().Perm())
	}
}

func modeOf(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode() & (os.ModePerm | os.ModeSticky)
}
