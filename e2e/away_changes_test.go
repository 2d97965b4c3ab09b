//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// keepOriginalFor5m lets a disconnected alloc stay unknown (not lost) for
// longer than any of these tests, and prefer the original on return.
const keepOriginalFor5m = `
    disconnect {
      lost_after = "5m"
      reconcile  = "keep_original"
    }`

// Changes to a job while one of its clients is away: when the client comes
// back, the servers' current wish wins over the original's keep_original
// claim, and exactly what the job now asks for runs (promises 3 and 4).
func TestJobChangedWhileClientAway(t *testing.T) {
	// The job is stopped and run again while the client is away: the
	// unknown original is desired stop forever (stop never goes back to
	// run); the new alloc on the other client is the one that runs.
	t.Run("stopped and run again", func(t *testing.T) {
		m := newTaskMarker(t)
		c := startFaultCluster(t, "c1", "c2")
		s := c.server
		job := serviceJob("again", m, keepOriginalFor5m)
		registerJob(t, s, job, 10*time.Second)
		orig, _ := waitForFirstAlloc(t, s, "again", m)
		repl, thaw := disconnectAndReplace(t, s, c.clients, "again", orig, m)

		if _, _, err := s.api().Jobs().Deregister("again", false, nil); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 10*time.Second, func() (bool, string) {
			allocs, err := jobAllocs(s, "again")
			if err != nil {
				return false, err.Error()
			}
			for _, a := range allocs {
				if !a.ClientTerminalStatus() && a.ClientStatus != "unknown" {
					return false, "still running: " + describeAllocs(allocs)
				}
			}
			return m.procs()[repl.ID] == 0, "the replacement's task still runs"
		})
		registerJob(t, s, job, 10*time.Second)
		var fresh string
		waitFor(t, 30*time.Second, func() (bool, string) {
			allocs, err := jobAllocs(s, "again")
			if err != nil {
				return false, err.Error()
			}
			running := runningAllocs(allocs)
			if len(running) != 1 || running[0].ID == orig.ID || running[0].ID == repl.ID {
				return false, describeAllocs(allocs)
			}
			fresh = running[0].ID
			return m.procs()[fresh] != 0, "no process for the new alloc"
		})

		thaw()
		waitFor(t, 30*time.Second, func() (bool, string) {
			a, _, err := s.api().Allocations().Info(orig.ID, nil)
			if err != nil {
				return false, err.Error()
			}
			return a.ClientTerminalStatus() && m.procs()[orig.ID] == 0,
				fmt.Sprintf("original is desired %s, client %s, processes %v", a.DesiredStatus, a.ClientStatus, m.procs())
		})
		waitForEvalsDone(t, s, "again")
		allocs, err := jobAllocs(s, "again")
		if err != nil {
			t.Fatal(err)
		}
		if running := runningAllocs(allocs); len(running) != 1 || running[0].ID != fresh {
			t.Fatalf("want only the new alloc %s running: %s", fresh[:8], describeAllocs(allocs))
		}
		if procs := m.procs(); len(procs) != 1 || procs[fresh] == 0 {
			t.Fatalf("want only the new alloc's process, have %v", procs)
		}
	})

	// The job is scaled from 2 to 1 while the client of its second alloc
	// (g[1]) is away and that alloc's replacement runs: g[1] is not needed
	// any more, neither the replacement nor the unknown original, so no
	// alloc named g[1] may stay desired running; the reachable g[0] keeps
	// running through the reconnect and is the one that survives.
	t.Run("scaled down", func(t *testing.T) {
		m := newTaskMarker(t)
		c := startFaultCluster(t, "c1", "c2")
		s := c.server
		two := strings.Replace(serviceJob("shrink", m, keepOriginalFor5m), "count = 1", "count = 2", 1)
		registerJob(t, s, two, 10*time.Second)
		var second *api.Allocation
		waitFor(t, 30*time.Second, func() (bool, string) {
			allocs, err := jobAllocs(s, "shrink")
			if err != nil {
				return false, err.Error()
			}
			running := runningAllocs(allocs)
			if len(running) != 2 || len(m.procs()) != 2 {
				return false, describeAllocs(allocs)
			}
			for _, a := range running {
				if a.Name == "shrink.g[1]" {
					second = a
				}
			}
			return second != nil, describeAllocs(allocs)
		})
		frozen := c.clients[second.NodeName]
		thaw := frozen.freeze()
		waitFor(t, 20*time.Second, func() (bool, string) {
			allocs, err := jobAllocs(s, "shrink")
			if err != nil {
				return false, err.Error()
			}
			for _, a := range allocs {
				if a.ID == second.ID && a.ClientStatus != "unknown" {
					return false, describeAllocs(allocs)
				}
			}
			// Both allocs may have shared the frozen node.
			return len(runningAllocs(allocs)) == 2, describeAllocs(allocs)
		})

		registerJob(t, s, serviceJob("shrink", m, keepOriginalFor5m), 10*time.Second)
		waitForEvalsDone(t, s, "shrink")
		allocs, err := jobAllocs(s, "shrink")
		if err != nil {
			t.Fatal(err)
		}
		var first *api.Allocation
		for _, a := range allocs {
			if a.DesiredStatus != "run" {
				continue
			}
			if a.Name != "shrink.g[0]" {
				t.Errorf("scaled to 1 while %s is away, %s is still desired running: %s", frozen.name, a.Name, describeAllocs(allocs))
			} else if a.ClientStatus == "running" {
				first = a
			}
		}
		if first == nil {
			t.Fatalf("no reachable g[0] runs after the scale down: %s", describeAllocs(allocs))
		}

		thaw()
		check := func() (bool, string) {
			if st := nodeStatus(s, frozen.name); st != "ready" {
				return false, "thawed node is " + st
			}
			allocs, err := jobAllocs(s, "shrink")
			if err != nil {
				return false, err.Error()
			}
			for _, a := range allocs {
				if a.ClientStatus == "unknown" || a.ClientStatus == "pending" {
					return false, "not reported yet: " + describeAllocs(allocs)
				}
			}
			running, procs := runningAllocs(allocs), m.procs()
			if len(running) != 1 || len(procs) != 1 || procs[running[0].ID] == 0 {
				return false, fmt.Sprintf("%s, processes %v", describeAllocs(allocs), procs)
			}
			return true, ""
		}
		waitFor(t, 30*time.Second, check)
		waitForEvalsDone(t, s, "shrink")
		if ok, why := check(); !ok {
			t.Fatalf("after every eval finished: %s", why)
		}
		allocs, _ = jobAllocs(s, "shrink")
		if running := runningAllocs(allocs); running[0].ID != first.ID {
			g0, _, _ := s.api().Allocations().Info(first.ID, nil)
			t.Errorf("the reconnect stopped the reachable g[0] %s (modified@%d) and kept %s %s: %s; evals %s",
				first.ID[:8], g0.ModifyIndex, running[0].Name, running[0].ID[:8], describeAllocs(allocs), describeEvals(s, "shrink"))
		}
	})
}
