//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"
)

// A client agent that stops, gracefully (SIGINT) or by crashing (SIGKILL),
// leaves its tasks running (outside dev mode), and the same agent started
// again on the same data dir re-attaches to them: the task keeps its pid,
// is not restarted, and its alloc stays running on the servers.
func TestClientRestartReattachesToRunningTask(t *testing.T) {
	t.Run("graceful", func(t *testing.T) { testClientRestartReattaches(t, (*agent).stop) })
	t.Run("crash", func(t *testing.T) { testClientRestartReattaches(t, (*agent).kill) })
}

func testClientRestartReattaches(t *testing.T, halt func(*agent)) {
	m := newTaskMarker(t)
	c := startFaultCluster(t, "c1")
	s, client := c.server, c.clients["c1"]
	registerJob(t, s, serviceJob("survivor", m, ""), 10*time.Second)
	alloc, pid := waitForFirstAlloc(t, s, "survivor", m)

	node, _, err := s.api().Nodes().Info(alloc.NodeID, nil)
	if err != nil {
		t.Fatal(err)
	}
	halt(client)
	if got := m.procs()[alloc.ID]; got != pid {
		t.Fatalf("halting the client agent stopped its task (pid %d, now %d)", pid, got)
	}
	restartedAt := time.Now()
	client.start()

	// The restarted client registers again (the node's modify index moves),
	// then reads its assignment; it serves the alloc's stats once its
	// runner has re-attached to the task.
	waitFor(t, 30*time.Second, func() (bool, string) {
		n, _, err := s.api().Nodes().Info(alloc.NodeID, nil)
		if err != nil {
			return false, err.Error()
		}
		if n.Status != "ready" || n.ModifyIndex <= node.ModifyIndex {
			return false, fmt.Sprintf("node %s at index %d (was %d)", n.Status, n.ModifyIndex, node.ModifyIndex)
		}
		u, err := client.api().Allocations().Stats(alloc.ID, nil)
		if err != nil {
			return false, "stats: " + err.Error()
		}
		return u.Tasks["t"] != nil, fmt.Sprintf("stats %+v", u)
	})
	t.Logf("client back and re-attached %s after the restart", time.Since(restartedAt))

	waitForEvalsDone(t, s, "survivor")
	a, _, err := s.api().Allocations().Info(alloc.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.ClientStatus != "running" || a.DesiredStatus != "run" {
		t.Fatalf("alloc is desired %s, client %s after the client restart", a.DesiredStatus, a.ClientStatus)
	}
	if ts := a.TaskStates["t"]; ts == nil || ts.State != "running" || ts.Restarts != 0 {
		t.Fatalf("task state after the client restart: %+v", ts)
	}
	allocs, err := jobAllocs(s, "survivor")
	if err != nil {
		t.Fatal(err)
	}
	if len(allocs) != 1 {
		t.Fatalf("the client restart produced more allocs: %s", describeAllocs(allocs))
	}
	if procs := m.procs(); len(procs) != 1 || procs[alloc.ID] != pid {
		t.Fatalf("want the task still at pid %d and nothing else, have %v", pid, procs)
	}
}
