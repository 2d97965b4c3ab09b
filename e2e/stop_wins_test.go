//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// A job stopped while its client is unreachable stays stopped: when the
// client comes back, the servers' desired stop wins over resuming the
// unknown alloc, and the task is stopped, not restarted (DESIGN.md, "A
// client never restarts an alloc that the server wants stopped").
func TestJobStoppedWhileClientFrozenStaysStopped(t *testing.T) {
	m := newTaskMarker(t)
	c := startFaultCluster(t, "c1")
	s := c.server
	registerJob(t, s, serviceJob("stopme", m, `
    disconnect {
      lost_after = "5m"
      reconcile  = "keep_original"
    }`), 10*time.Second)
	orig, origPid := waitForFirstAlloc(t, s, "stopme", m)

	thaw := c.clients["c1"].freeze()
	waitFor(t, 20*time.Second, func() (bool, string) {
		a, _, err := s.api().Allocations().Info(orig.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		return nodeStatus(s, "c1") == "disconnected" && a.ClientStatus == "unknown",
			fmt.Sprintf("node %s, alloc %s", nodeStatus(s, "c1"), a.ClientStatus)
	})
	if _, _, err := s.api().Jobs().Deregister("stopme", false, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() (bool, string) {
		a, _, err := s.api().Allocations().Info(orig.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		return a.DesiredStatus == "stop", "desired " + a.DesiredStatus
	})

	thawedAt := time.Now()
	thaw()
	waitFor(t, 30*time.Second, func() (bool, string) {
		a, _, err := s.api().Allocations().Info(orig.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		if !a.ClientTerminalStatus() {
			return false, "alloc is " + a.ClientStatus
		}
		return len(m.procs()) == 0, fmt.Sprintf("task processes %v (was pid %d)", m.procs(), origPid)
	})
	t.Logf("stopped job's task gone %s after the thaw", time.Since(thawedAt))
	waitForEvalsDone(t, s, "stopme")
	allocs, err := jobAllocs(s, "stopme")
	if err != nil {
		t.Fatal(err)
	}
	if running := runningAllocs(allocs); len(running) != 0 || len(m.procs()) != 0 {
		t.Fatalf("a stopped job runs again: %s, processes %v", describeAllocs(allocs), m.procs())
	}
}

// A job stopped while its client agent is down (crashed; the task lives
// on) stays stopped: the restarted client restores the alloc, reads that
// its desired status is stop, and stops the task instead of resuming it
// (the start gate; DESIGN.md, "A client never restarts an alloc that the
// server wants stopped").
//
// In "task died", the task also exited while the client was away: the
// restored runner must not start it again.
func TestJobStoppedWhileClientDownIsNotResumed(t *testing.T) {
	t.Run("task alive", func(t *testing.T) { testStoppedWhileDown(t, false) })
	t.Run("task died", func(t *testing.T) { testStoppedWhileDown(t, true) })
}

func testStoppedWhileDown(t *testing.T, taskDies bool) {
	m := newTaskMarker(t)
	c := startFaultCluster(t, "c1")
	s, client := c.server, c.clients["c1"]
	// No restart delay: a restored runner that did not wait for the
	// servers' word would start the dead task again at once.
	registerJob(t, s, serviceJob("gone", m, `
    disconnect {
      lost_after = "5m"
    }
    restart {
      attempts = 3
      interval = "1m"
      delay    = "0s"
      mode     = "fail"
    }`), 10*time.Second)
	alloc, pid := waitForFirstAlloc(t, s, "gone", m)

	client.kill()
	if got := m.procs()[alloc.ID]; got != pid {
		t.Fatalf("killing the client agent killed its task (pid %d, now %d)", pid, got)
	}
	if taskDies {
		syscall.Kill(-pid, syscall.SIGKILL)
		waitFor(t, 5*time.Second, func() (bool, string) { return len(m.procs()) == 0, "task still alive" })
	}
	if _, _, err := s.api().Jobs().Deregister("gone", false, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() (bool, string) {
		a, _, err := s.api().Allocations().Info(alloc.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		return a.DesiredStatus == "stop", "desired " + a.DesiredStatus
	})

	restartedAt := time.Now()
	client.start()
	waitFor(t, 30*time.Second, func() (bool, string) {
		a, _, err := s.api().Allocations().Info(alloc.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		if !a.ClientTerminalStatus() {
			return false, "alloc is " + a.ClientStatus
		}
		return len(m.procs()) == 0, fmt.Sprintf("task processes %v (was pid %d)", m.procs(), pid)
	})
	t.Logf("stopped job's task gone %s after the client restart", time.Since(restartedAt))
	waitForEvalsDone(t, s, "gone")
	a, _, err := s.api().Allocations().Info(alloc.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ts := a.TaskStates["t"]; ts != nil {
		for _, e := range ts.Events {
			if e.Type == "Started" && e.Time >= restartedAt.UnixNano() {
				t.Fatalf("the stopped alloc's task was started again: %s", describeEvents(ts))
			}
		}
	}
	if procs := m.procs(); len(procs) != 0 {
		t.Fatalf("a stopped job runs again: processes %v", procs)
	}
}

func describeEvents(ts *api.TaskState) string {
	var b strings.Builder
	for _, e := range ts.Events {
		fmt.Fprintf(&b, "[%s %s: %s]", time.Unix(0, e.Time).Format(time.StampMilli), e.Type, e.DisplayMessage)
	}
	return b.String()
}
