//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// nestedJob is a count-1 service job in the inner datacenter dc whose task
// sleeps under the marker; group is extra group configuration.
func nestedJob(id, dc string, m taskMarker, group string) string {
	return fmt.Sprintf(`
job %q {
  datacenters = [%q]
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
`, id, dc, group, m.command())
}

// An inner agent restarted in place with `alloc restart` keeps its data dir
// (inside the outer alloc dir), comes back as the same node and re-attaches
// to its running task: the work keeps its process, no second alloc appears.
func TestNestedAllocRestartReattaches(t *testing.T) {
	start := time.Now()
	m := newTaskMarker(t)
	c := startNestedCluster(t)
	dc := "nested-alloc-restart"
	a := c.startInner(innerSpec{name: "restart-a", dc: dc})
	dumpOnFailure(t, a)
	nodeID, agentPid := a.nodeID(), a.pid()
	registerJob(t, c.server, nestedJob("work", dc, m, `
    disconnect {
      lost_after = "5m"
    }`), 10*time.Second)
	work, workPid := waitForFirstAlloc(t, c.server, "work", m)
	if work.NodeID != nodeID {
		t.Fatalf("work runs on %s, want the inner node %s", work.NodeName, nodeID[:8])
	}

	if out, code := c.server.cli("alloc", "restart", a.alloc().ID); code != 0 {
		t.Fatalf("alloc restart: exit %d: %s", code, out)
	}
	waitFor(t, 30*time.Second, func() (bool, string) {
		pid := a.pid()
		return pid != 0 && pid != agentPid, fmt.Sprintf("inner agent pid %d (was %d)", pid, agentPid)
	})
	a.waitReady(30 * time.Second)
	if id := a.nodeID(); id != nodeID {
		t.Fatalf("restarted inner agent registered as node %s, want the same node %s", id, nodeID)
	}
	assertSoleWork(t, c.server, "work", work.ID, workPid, m)
	t.Logf("scenario took %s", time.Since(start).Round(time.Millisecond))
}

// assertSoleWork waits until the job's only live alloc is id, running with
// process pid, and checks that this holds once every eval is done.
func assertSoleWork(t *testing.T, s *agent, jobID, id string, pid int, m taskMarker) []*api.Allocation {
	t.Helper()
	check := func() (bool, string) {
		allocs, err := jobAllocs(s, jobID)
		if err != nil {
			return false, err.Error()
		}
		running := runningAllocs(allocs)
		if len(running) != 1 || running[0].ID != id {
			return false, fmt.Sprintf("want only %s running: %s", id[:8], describeAllocs(allocs))
		}
		procs := m.procs()
		return len(procs) == 1 && procs[id] == pid, fmt.Sprintf("want only pid %d of %s, have %v", pid, id[:8], procs)
	}
	waitForStable(t, 30*time.Second, 2*time.Second, check)
	waitForEvalsDone(t, s, jobID)
	if ok, why := check(); !ok {
		t.Fatalf("after every eval finished: %s", why)
	}
	allocs, _ := jobAllocs(s, jobID)
	return allocs
}
