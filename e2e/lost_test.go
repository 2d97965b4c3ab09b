//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// A silent client's alloc is lost and replaced: at once when the group has
// no disconnect block (the node goes down), or once disconnect.lost_after
// has passed (the node was disconnected). When the client comes back, the
// lost alloc is no longer its to run (desired stop): it stops the task, and
// only the replacement runs (promises 3 and 4).
func TestReturningClientStopsItsLostAlloc(t *testing.T) {
	t.Run("node down", func(t *testing.T) { testLostOnReturn(t, "", "down") })
	t.Run("lost_after expired", func(t *testing.T) {
		testLostOnReturn(t, `
    disconnect {
      lost_after = "2s"
    }`, "")
	})
}

// testLostOnReturn runs the scenario with group configuration group; a
// non-empty nodeStatus is what the frozen node must be while it is away.
func testLostOnReturn(t *testing.T, group, wantNodeStatus string) {
	m := newTaskMarker(t)
	c := startFaultCluster(t, "c1", "c2")
	s := c.server
	registerJob(t, s, serviceJob("lost", m, group), 10*time.Second)
	orig, origPid := waitForFirstAlloc(t, s, "lost", m)

	frozenAt := time.Now()
	thaw := c.clients[orig.NodeName].freeze()
	var repl *api.Allocation
	waitFor(t, 20*time.Second, func() (bool, string) {
		if st := nodeStatus(s, orig.NodeName); wantNodeStatus != "" && st != wantNodeStatus {
			return false, "frozen node is " + st
		}
		allocs, err := jobAllocs(s, "lost")
		if err != nil {
			return false, err.Error()
		}
		repl = nil
		for _, a := range allocs {
			if a.ID == orig.ID && a.ClientStatus != "lost" {
				return false, "original is " + a.ClientStatus
			}
			if a.ID != orig.ID && a.DesiredStatus == "run" && a.ClientStatus == "running" {
				repl = a
			}
		}
		return repl != nil && m.procs()[repl.ID] != 0, "no running replacement: " + describeAllocs(allocs)
	})
	t.Logf("original lost, replacement running %s after the freeze", time.Since(frozenAt))
	if m.procs()[orig.ID] != origPid {
		t.Fatalf("the frozen client's task (pid %d) should still be running: %v", origPid, m.procs())
	}

	thawedAt := time.Now()
	thaw()
	waitFor(t, 30*time.Second, func() (bool, string) {
		if st := nodeStatus(s, orig.NodeName); st != "ready" {
			return false, "thawed node is " + st
		}
		return m.procs()[orig.ID] == 0, fmt.Sprintf("the lost alloc's process (pid %d) still runs", origPid)
	})
	t.Logf("lost alloc's task stopped %s after the thaw", time.Since(thawedAt))

	waitForEvalsDone(t, s, "lost")
	allocs, err := jobAllocs(s, "lost")
	if err != nil {
		t.Fatal(err)
	}
	if running := runningAllocs(allocs); len(running) != 1 || running[0].ID != repl.ID {
		t.Fatalf("want only the replacement running: %s", describeAllocs(allocs))
	}
	for _, a := range allocs {
		if a.ID == orig.ID && (a.DesiredStatus == "run" || !a.ClientTerminalStatus()) {
			t.Fatalf("the lost alloc came back: %s", describeAllocs(allocs))
		}
	}
	if procs := m.procs(); len(procs) != 1 || procs[repl.ID] == 0 {
		t.Fatalf("want only the replacement's process, have %v", procs)
	}
}
