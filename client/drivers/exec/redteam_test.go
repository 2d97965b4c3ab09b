package exec

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/internal/testutil"
)

// A child forked in the task's first instant is held to the task's memory
// limit: the init is in the cgroup before the task's first instruction.
// (Joining the cgroup after the start let such a child touch 300 MB under
// `memory = 32`.)
func TestAChildForkedAtOnceIsHeldToTheMemoryLimit(t *testing.T) {
	needRoot(t)
	d := newDriver(t)
	if d.Fingerprint().Attributes["cgroup.memory"] != "1" {
		t.Skip("no writable memory cgroup")
	}
	cfg, stdout, _ := testTask(t, `dd if=/dev/zero of=/dev/null bs=200M count=1 2>/dev/null & wait $!; echo "dd=$?"`)
	limitMB := int64(32)
	if raceEnabled {
		limitMB = 64 // room for the race detector's init
	}
	cfg.Resources.MemoryMB = limitMB
	start(t, d, cfg)
	res := waitExit(t, d, cfg.ID)
	waitOutput(t, stdout, "dd=")
	if !strings.Contains(stdout.String(), "dd=137") {
		t.Errorf("dd, asking for 200 MB under a %d MB limit, was not killed: %q", limitMB, stdout.String())
	}
	peak, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/memory/drover", cgroupName(cfg), "memory.max_usage_in_bytes"))
	if err == nil {
		n, _ := strconv.ParseInt(strings.TrimSpace(string(peak)), 10, 64)
		if n > limitMB<<20 {
			t.Errorf("the task's cgroup peaked at %d bytes, over its %d MB limit", n, limitMB)
		}
	}
	if !res.OOMKilled {
		t.Errorf("the exit does not report the OOM kill: %+v", res)
	}
}

// pidNS returns the pid namespace of pid, as readlink shows it.
func pidNS(pid int) string {
	s, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	return s
}

// inNamespace lists the host pids of the processes in namespace ns.
func inNamespace(ns string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pidNS(pid) == ns {
			out = append(out, pid)
		}
	}
	return out
}

// Nothing the task started survives its stop: not a setsid child, not a
// double-forked daemon, whether the task obeys the kill signal or ignores
// it until the kill timeout.
func TestNothingOfTheTaskSurvivesStopAndDestroy(t *testing.T) {
	needRoot(t)
	const spawn = `setsid sleep 1000 & (setsid sh -c 'sleep 1001 &' &); sleep 1002 & echo started; `
	for _, tc := range []struct {
		name, script string
		timeout      time.Duration
	}{
		{"obeying the kill signal", spawn + "wait", 10 * time.Second},
		{"ignoring it until the kill timeout", "trap '' INT TERM; " + spawn + "while :; do wait; done", 200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDriver(t)
			cfg, stdout, _ := testTask(t, tc.script)
			start(t, d, cfg)
			waitOutput(t, stdout, "started")
			st, err := d.InspectTask(cfg.ID)
			if err != nil {
				t.Fatal(err)
			}
			ns := pidNS(st.Pid)
			// init, sh, three sleeps (and the daemon's short-lived sh).
			testutil.WaitFor(t, "the task's processes to start", func() bool { return len(inNamespace(ns)) >= 5 })
			if err := d.StopTask(cfg.ID, tc.timeout, ""); err != nil {
				t.Fatal(err)
			}
			waitExit(t, d, cfg.ID)
			if err := d.DestroyTask(cfg.ID, true); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, "every process of the task to be gone", func() bool { return len(inNamespace(ns)) == 0 })
			if _, err := os.Stat(filepath.Join("/sys/fs/cgroup/memory/drover", cgroupName(cfg))); !os.IsNotExist(err) {
				t.Errorf("the task's memory cgroup is left behind: %v", err)
			}
		})
	}
}
