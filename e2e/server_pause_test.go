//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// A server that hangs (SIGSTOP) for longer than the heartbeat TTL wakes up
// to overdue heartbeat timers for clients that did nothing wrong: their
// heartbeats wait in its sockets. It must see that it, not they, went
// silent: no node leaves ready, no alloc is lost or replaced, and the
// cluster keeps exactly the job's count running, one task process per
// running alloc (promise 4).
func TestServerPauseLeavesNoDuplicates(t *testing.T) {
	m := newTaskMarker(t)
	c := startFaultCluster(t, "c1", "c2")
	s := c.server
	job := strings.Replace(serviceJob("paused", m, ""), "count = 1", "count = 2", 1)
	registerJob(t, s, job, 10*time.Second)
	var placed []*api.Allocation
	waitFor(t, 30*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(s, "paused")
		if err != nil {
			return false, err.Error()
		}
		placed = allocs
		return len(allocs) == 2 && len(runningAllocs(allocs)) == 2 && len(m.procs()) == 2, describeAllocs(allocs)
	})
	marks := lastNodeEvents(t, s, "c1", "c2")

	// The fault itself lasts four seconds: twice TTL plus grace.
	thaw := s.freeze()
	<-time.After(4 * time.Second)
	thawedAt := time.Now()
	thaw()

	// Watch through every overdue timer and the fresh window (2*TTL +
	// grace = 3s) given for it: nothing may change meanwhile. A poll that
	// fails to reach the server (it is catching up) is just retried.
	waitForStable(t, 30*time.Second, 8*time.Second, func() (bool, string) {
		changed, err := pauseChurn(s, "paused", placed)
		if err != nil {
			return false, err.Error()
		}
		if changed != "" {
			t.Fatalf("%s after the thaw: %s", time.Since(thawedAt).Round(time.Millisecond), changed)
		}
		return true, ""
	})
	waitForEvalsDone(t, s, "paused")
	if changed, err := pauseChurn(s, "paused", placed); err != nil || changed != "" {
		t.Fatalf("after every eval finished: %s (%v)", changed, err)
	}
	procs := m.procs()
	if len(procs) != 2 {
		t.Fatalf("task processes %v, want one per alloc", procs)
	}
	for _, a := range placed {
		if procs[a.ID] == 0 {
			t.Fatalf("alloc %s has no process (%v)", a.ID[:8], procs)
		}
	}
	// The nodes' records must not even have passed through another status.
	for name, since := range marks {
		for _, ev := range nodeByName(t, s, name).Events {
			if ev.CreateIndex > since && (ev.Message == "Node heartbeat missed" || strings.HasPrefix(ev.Message, "Node status")) {
				t.Fatalf("node %s changed status over the pause: %q", name, ev.Message)
			}
		}
	}
}

// pauseChurn reports what, if anything, the pause changed: a node not
// ready, or the job's allocs other than the placed ones still running.
func pauseChurn(s *agent, jobID string, placed []*api.Allocation) (string, error) {
	nodes, _, err := s.api().Nodes().List(nil)
	if err != nil {
		return "", err
	}
	for _, n := range nodes {
		if n.Status != "ready" {
			return fmt.Sprintf("node %s is %s (%v)", n.Name, n.Status, describeNodes(nodes)), nil
		}
	}
	allocs, err := jobAllocs(s, jobID)
	if err != nil {
		return "", err
	}
	if len(allocs) != len(placed) {
		return "allocs changed: " + describeAllocs(allocs), nil
	}
	for i, a := range allocs {
		if a.ID != placed[i].ID || a.DesiredStatus != "run" || a.ClientStatus != "running" {
			return "allocs changed: " + describeAllocs(allocs), nil
		}
	}
	return "", nil
}

func nodeByName(t *testing.T, s *agent, name string) *api.Node {
	t.Helper()
	nodes, _, err := s.api().Nodes().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Name == name {
			node, _, err := s.api().Nodes().Info(n.ID, nil)
			if err != nil {
				t.Fatal(err)
			}
			return node
		}
	}
	t.Fatalf("no node %s", name)
	return nil
}

// lastNodeEvents returns, per node name, the index of its latest event.
func lastNodeEvents(t *testing.T, s *agent, names ...string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, name := range names {
		for _, ev := range nodeByName(t, s, name).Events {
			out[name] = max(out[name], ev.CreateIndex)
		}
	}
	return out
}
