package rawexec

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/helper/clock"
)

// startAndReattach starts `sh -c script` on one driver, waits for the
// script to create $PWD/ready (so its traps are set and its child runs),
// shuts that driver down as a stopping client does, and re-attaches a
// second driver to the task. It checks that the child whose pid the script
// wrote to $PWD/child is in the task's process group, and returns the
// second driver and the task's config.
func startAndReattach(t *testing.T, clk clock.Clock, script string) (*Driver, *drivers.TaskConfig) {
	t.Helper()
	d1 := New(nil, clk, true)
	cfg, _ := taskConfig(t, script)
	h, err := d1.StartTask(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// A failing test leaves no process behind.
	st, _ := d1.InspectTask(cfg.ID)
	t.Cleanup(func() { _ = unix.Kill(-st.Pid, unix.SIGKILL) })
	testutil.WaitFor(t, "the task to set its trap and start its child", func() bool {
		_, err := os.Stat(filepath.Join(cfg.Dir, "ready"))
		return err == nil
	})
	b, err := os.ReadFile(filepath.Join(cfg.Dir, "child"))
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("child pid %q: %v", b, err)
	}
	// A signal that reaches the forked child before it execs sleep can be
	// taken by the trap handler the child keeps until then, and be lost.
	testutil.WaitFor(t, "the task's child to exec sleep", func() bool {
		comm, _ := os.ReadFile("/proc/" + strconv.Itoa(child) + "/comm")
		return string(comm) == "sleep\n"
	})
	d1.Shutdown()
	d2 := New(nil, clk, true)
	t.Cleanup(d2.Shutdown)
	if err := d2.RecoverTask(h); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(groupLive(st.Pid), child) {
		t.Fatalf("child %d is not in the task's process group %d", child, st.Pid)
	}
	return d2, cfg
}

// groupLive lists the processes of group pgrp that have not exited.
func groupLive(pgrp int) []int {
	entries, _ := os.ReadDir("/proc")
	var live []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgrp) && f[0] != "Z" && f[0] != "X" {
			live = append(live, pid)
		}
	}
	return live
}

// After a client restart, the kill signal still reaches the task and its
// whole process group: a task that exits on SIGTERM ends by that signal,
// with its background child, while the fake clock never lets the kill
// timeout (and its SIGKILL) come.
func TestStopTaskAfterReattachSignalsTheWholeGroup(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	d, cfg := startAndReattach(t, clk, `trap 'exit 7' TERM; sleep 1000 & echo $! > child; touch ready; wait`)
	st, _ := d.InspectTask(cfg.ID)
	pgrp := st.Pid

	stopped := make(chan error, 1)
	go func() { stopped <- d.StopTask(cfg.ID, time.Hour, "SIGTERM") }()
	res := waitExit(t, d, cfg.ID)
	if res == nil || res.ExitCode != 7 || res.Signal != 0 {
		t.Fatalf("want exit 7 from the task's TERM trap, got %+v", res)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	// The child got SIGTERM with its group; nothing has sent SIGKILL yet.
	testutil.WaitFor(t, "the task's child to exit of its group's SIGTERM", func() bool { return len(groupLive(pgrp)) == 0 })
	if err := d.DestroyTask(cfg.ID, false); err != nil {
		t.Fatal(err)
	}
}

// After a client restart, a task group that ignores its kill signal is
// killed with SIGKILL once the kill timeout passes, and not before.
func TestStopTaskAfterReattachKillsAGroupThatIgnoresItsSignal(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	d, cfg := startAndReattach(t, clk, `trap '' INT; sleep 1000 & echo $! > child; touch ready; wait`)
	st, _ := d.InspectTask(cfg.ID)
	pgrp := st.Pid

	stopped := make(chan error, 1)
	go func() { stopped <- d.StopTask(cfg.ID, 5*time.Second, "SIGINT") }()
	if !clk.WaitForTimers(1, 5*time.Second) {
		t.Fatal("StopTask did not wait on the kill timeout")
	}
	if st, _ := d.InspectTask(cfg.ID); st.State != drivers.TaskStateRunning {
		t.Fatalf("the task ignores SIGINT and should still run before the timeout, state %s", st.State)
	}
	clk.Advance(5 * time.Second)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if res := waitExit(t, d, cfg.ID); res == nil || res.Signal != int(syscall.SIGKILL) {
		t.Fatalf("want SIGKILL after the kill timeout, got %+v", res)
	}
	testutil.WaitFor(t, "the task's child to die with its group", func() bool { return len(groupLive(pgrp)) == 0 })
	if err := d.DestroyTask(cfg.ID, false); err != nil {
		t.Fatal(err)
	}
}
