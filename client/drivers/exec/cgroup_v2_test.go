package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/internal/testutil"
)

// v2Root finds a cgroup v2 hierarchy: the unified root on a v2 host, or
// the "unified" mount of a hybrid v1 host (which has no controllers, but
// is enough to run tasks in groups, clone into them and kill them).
func v2Root(t *testing.T) string {
	t.Helper()
	for _, root := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
			return root
		}
	}
	t.Skip("no cgroup v2 hierarchy is mounted")
	return ""
}

// On cgroup v2 the init is cloned straight into the task's group, so the
// task's first instruction runs inside it; Stop kills the whole group.
func TestOnCgroupV2TheTaskStartsInItsGroupAndDiesWithIt(t *testing.T) {
	needRoot(t)
	root := v2Root(t)
	d := New(Options{Enabled: true, CgroupRoot: root})
	t.Cleanup(d.Shutdown)
	if v := d.Fingerprint().Attributes["cgroup.version"]; v != "2" {
		t.Fatalf("cgroup.version = %q under %s", v, root)
	}
	cfg, stdout, _ := testTask(t, `cat /proc/self/cgroup; setsid sleep 1000 & echo started; wait`)
	if attrs := d.Fingerprint().Attributes; attrs["cgroup.memory"] != "1" || attrs["cgroup.pids"] != "1" {
		// A hybrid host's unified mount: limits cannot be enforced, and
		// a task asking for them is refused rather than run without.
		_, err := d.StartTask(cfg)
		if err == nil {
			_ = d.DestroyTask(cfg.ID, true)
			t.Fatal("a task with memory and pids limits ran where neither can be enforced")
		}
		if !strings.Contains(err.Error(), "cannot enforce the task's limits") {
			t.Fatalf("StartTask: %v", err)
		}
		d = New(Options{Enabled: true, CgroupRoot: root, noLimits: true})
		t.Cleanup(d.Shutdown)
	}
	start(t, d, cfg)
	waitOutput(t, stdout, "started")
	if !strings.Contains(stdout.String(), "0::/drover/"+cgroupName(cfg)+"\n") {
		t.Errorf("the task's first command ran outside its group: %q", stdout.String())
	}
	group := filepath.Join(root, "drover", cgroupName(cfg))
	u, err := d.TaskStats(cfg.ID)
	if err != nil || u.Pids < 3 {
		t.Errorf("stats %+v, %v; want init, sh and sleep", u, err)
	}
	if err := d.StopTask(cfg.ID, 100*time.Millisecond, ""); err != nil {
		t.Fatal(err)
	}
	waitExit(t, d, cfg.ID)
	if err := d.DestroyTask(cfg.ID, true); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the task's v2 group to be removed", func() bool {
		_, err := os.Stat(group)
		return os.IsNotExist(err)
	})
}
