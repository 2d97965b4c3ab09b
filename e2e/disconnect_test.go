//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// serviceJob is a count-1 service job whose task sleeps under the marker;
// group is extra group configuration (a disconnect block, say).
func serviceJob(id string, m taskMarker, group string) string {
	return fmt.Sprintf(`
job %q {
  datacenters = ["dc1"]
  type        = "service"
  group "g" {
    count = 1
%s
    task "t" {
%s
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`, id, group, m.command())
}

// faultCluster is a server with two client-only agents, c1 and c2.
type faultCluster struct {
	server  *agent
	clients map[string]*agent
}

func startFaultCluster(t *testing.T, clients ...string) *faultCluster {
	t.Helper()
	c := &faultCluster{server: startServer(t, "server"), clients: map[string]*agent{}}
	for _, name := range clients {
		c.clients[name] = startClient(t, name, c.server)
	}
	waitForReadyNodes(t, c.server, clients...)
	return c
}

// waitForFirstAlloc waits until the job's one alloc runs and its task
// process exists; it returns the alloc and the process's pid.
func waitForFirstAlloc(t *testing.T, s *agent, jobID string, m taskMarker) (*api.Allocation, int) {
	t.Helper()
	var alloc *api.Allocation
	var pid int
	waitFor(t, 30*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(s, jobID)
		if err != nil {
			return false, err.Error()
		}
		if len(allocs) != 1 || allocs[0].ClientStatus != "running" {
			return false, describeAllocs(allocs)
		}
		alloc = allocs[0]
		pid = m.procs()[alloc.ID]
		return pid != 0, fmt.Sprintf("no process for alloc %s yet", alloc.ID[:8])
	})
	return alloc, pid
}

// Promise 4, seed 004: a client that stops answering is marked
// disconnected, its alloc unknown (AllocState), and a replacement runs on
// the other client; the original's task keeps running meanwhile. When the
// client comes back it heartbeats, reports, and the reconnect keeps exactly
// one of the two, as disconnect.reconcile says, and stops the other (its
// process goes away). A later job update is an ordinary update: the
// reconnect is not handled again (Nomad #14925).
func TestDisconnectedClientReconnects(t *testing.T) {
	t.Run("keep_original", func(t *testing.T) { testReconnect(t, "keep_original", true) })
	t.Run("keep_replacement", func(t *testing.T) { testReconnect(t, "keep_replacement", false) })
}

func testReconnect(t *testing.T, reconcile string, keepOriginal bool) {
	m := newTaskMarker(t)
	c := startFaultCluster(t, "c1", "c2")
	s := c.server
	group := fmt.Sprintf(`
    disconnect {
      lost_after = "5m"
      reconcile  = %q
    }`, reconcile)
	registerJob(t, s, serviceJob("reconnect", m, group), 10*time.Second)
	orig, origPid := waitForFirstAlloc(t, s, "reconnect", m)

	frozenAt := time.Now()
	thaw := c.clients[orig.NodeName].freeze()
	repl := waitForAwayAndReplaced(t, s, "reconnect", orig, m, 20*time.Second,
		func() string { return nodeStatus(s, orig.NodeName) }, "disconnected", "unknown")
	t.Logf("disconnected, original unknown, replacement running %s after the freeze", time.Since(frozenAt))
	if m.procs()[orig.ID] != origPid {
		t.Fatalf("the frozen client's task (pid %d) should keep running: %v", origPid, m.procs())
	}
	keep, drop := orig, repl
	if !keepOriginal {
		keep, drop = repl, orig
	}
	keepPid := m.procs()[keep.ID]

	thawedAt := time.Now()
	thaw()
	waitFor(t, 30*time.Second, func() (bool, string) {
		if st := nodeStatus(s, orig.NodeName); st != "ready" {
			return false, "thawed node is " + st
		}
		allocs, err := jobAllocs(s, "reconnect")
		if err != nil {
			return false, err.Error()
		}
		running := runningAllocs(allocs)
		if len(running) != 1 || running[0].ID != keep.ID {
			return false, fmt.Sprintf("want only %s running: %s", keep.ID[:8], describeAllocs(allocs))
		}
		for _, a := range allocs {
			if a.ID == drop.ID && (a.DesiredStatus == "run" || !a.ClientTerminalStatus()) {
				return false, "the other one is not stopped yet: " + describeAllocs(allocs)
			}
		}
		return m.procs()[drop.ID] == 0, "the stopped alloc's process is still alive"
	})
	t.Logf("reconnect settled %s after the thaw", time.Since(thawedAt))

	waitForEvalsDone(t, s, "reconnect")
	allocs, err := jobAllocs(s, "reconnect")
	if err != nil {
		t.Fatal(err)
	}
	if running := runningAllocs(allocs); len(running) != 1 || running[0].ID != keep.ID {
		t.Fatalf("after every eval finished, want only %s running: %s", keep.ID[:8], describeAllocs(allocs))
	}
	for _, a := range allocs {
		if a.ID == orig.ID && keepOriginal {
			assertUnknownThenRunning(t, a)
		}
	}
	if procs := m.procs(); len(procs) != 1 || procs[keep.ID] != keepPid {
		t.Fatalf("want only the kept alloc's process (pid %d), have %v", keepPid, procs)
	}

	// After the reconnect, scaling up is an ordinary update: one more
	// alloc, and the kept one untouched.
	scaled := strings.Replace(serviceJob("reconnect", m, group), "count = 1", "count = 2", 1)
	registerJob(t, s, scaled, 10*time.Second)
	waitFor(t, 30*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(s, "reconnect")
		if err != nil {
			return false, err.Error()
		}
		return len(runningAllocs(allocs)) == 2 && len(m.procs()) == 2, fmt.Sprintf("%s, processes %v", describeAllocs(allocs), m.procs())
	})
	waitForEvalsDone(t, s, "reconnect")
	allocs, err = jobAllocs(s, "reconnect")
	if err != nil {
		t.Fatal(err)
	}
	running := runningAllocs(allocs)
	if len(running) != 2 || (running[0].ID != keep.ID && running[1].ID != keep.ID) {
		t.Fatalf("after scaling to 2, want %s and one new alloc running: %s", keep.ID[:8], describeAllocs(allocs))
	}
	if pid := m.procs()[keep.ID]; pid != keepPid {
		t.Fatalf("the kept alloc's process changed from pid %d to %d", keepPid, pid)
	}
}

// unknownThenRunning reports whether the AllocState history records the
// disconnect (unknown) and, after it, the reconnect (running).
func unknownThenRunning(a *api.Allocation) bool {
	var unknownAt time.Time
	for _, st := range a.AllocStates {
		if st.Field != "ClientStatus" {
			continue
		}
		switch {
		case st.Value == "unknown":
			unknownAt = st.Time
		case st.Value == "running" && !unknownAt.IsZero() && !st.Time.Before(unknownAt):
			return true
		}
	}
	return false
}

// assertUnknownThenRunning checks the AllocState history records the
// disconnect (unknown) and, after it, the reconnect (running).
func assertUnknownThenRunning(t *testing.T, a *api.Allocation) {
	t.Helper()
	if unknownThenRunning(a) {
		return
	}
	var hist []string
	for _, st := range a.AllocStates {
		hist = append(hist, fmt.Sprintf("%s=%s@%s", st.Field, st.Value, st.Time.Format(time.StampMilli)))
	}
	t.Fatalf("alloc %s: AllocStates %v lack unknown followed by running", a.ID[:8], hist)
}
