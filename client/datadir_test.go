package client

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/config"
)

// The client's data dir lets a task's user pass through to its alloc dir
// but not list the allocs, and keeps the state DB and node secret out of
// every task's reach, even when the directories existed with looser modes.
func TestDataDirModesAreTightenedAtStart(t *testing.T) {
	e := newEnv(t, time.Minute)
	for _, d := range []string{e.dir, filepath.Join(e.dir, "alloc"), filepath.Join(e.dir, "client")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	c := e.start(func(cfg *config.Config) { cfg.DisableStateDB = false })
	want := map[string]os.FileMode{e.dir: 0o711, c.cfg.AllocDir(): 0o711, c.cfg.StateDir(): 0o700}
	for dir, mode := range want {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != mode {
			t.Errorf("%s: mode %#o, want %#o", dir, got, mode)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("checking what another user reaches needs root")
	}
	// t.TempDir's own parent is 0700; open it as a data_dir's parent is.
	if err := os.Chmod(filepath.Dir(e.dir), 0o711); err != nil {
		t.Fatal(err)
	}
	// As nobody: the data dir can be entered but not listed; the state
	// dir cannot even be entered.
	asNobody := func(script string) error {
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		return cmd.Run()
	}
	if err := asNobody("cd " + c.cfg.AllocDir()); err != nil {
		t.Errorf("nobody cannot pass through %s: %v", c.cfg.AllocDir(), err)
	}
	if err := asNobody("ls " + e.dir); err == nil {
		t.Errorf("nobody can list %s", e.dir)
	}
	if err := asNobody("ls " + c.cfg.AllocDir()); err == nil {
		t.Errorf("nobody can list %s", c.cfg.AllocDir())
	}
	if err := asNobody("cat " + filepath.Join(c.cfg.StateDir(), "state.db") + " >/dev/null"); err == nil {
		t.Errorf("nobody can read the client's state DB")
	}
}
