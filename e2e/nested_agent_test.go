//go:build e2e

package e2e

import (
	"fmt"
	"syscall"
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
	a := c.startInner(innerSpec{name: "restart-a"})
	dumpOnFailure(t, a)
	nodeID, agentPid := a.nodeID(), a.pid()
	registerJob(t, c.server, nestedJob("work", c.dc, m, `
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

// startPair starts inner agents <prefix>-a and <prefix>-b,
// runs the job (count 1, disconnect block group) and returns the agent
// whose node runs the job's alloc first, the other, the alloc and its
// task's pid. B joins after the alloc runs on A, so the alloc is on A.
func startPair(t *testing.T, c *nestedCluster, prefix string, specA innerSpec, jobID string, m taskMarker, group string) (a, b *innerAgent, orig *api.Allocation, origPid int) {
	t.Helper()
	specA.name = prefix + "-a"
	a = c.startInner(specA)
	dumpOnFailure(t, a)
	registerJob(t, c.server, nestedJob(jobID, c.dc, m, group), 10*time.Second)
	orig, origPid = waitForFirstAlloc(t, c.server, jobID, m)
	b = c.startInner(innerSpec{name: prefix + "-b"})
	dumpOnFailure(t, b)
	if orig.NodeID != a.nodeID() {
		t.Fatalf("the first alloc runs on %s, want inner agent %s", orig.NodeName, a.spec.name)
	}
	return a, b, orig, origPid
}

// waitForReplacement waits until the inner agent's node is disconnected,
// orig unknown with its process still pid, and a replacement running with a
// process of its own; it returns the replacement and its pid.
func waitForReplacement(t *testing.T, s *agent, ia *innerAgent, jobID string, orig *api.Allocation, origPid int, m taskMarker) (*api.Allocation, int) {
	t.Helper()
	repl := waitForAwayAndReplaced(t, s, jobID, orig, m, 30*time.Second, ia.status, "disconnected", "unknown")
	if pid := m.procs()[orig.ID]; pid != origPid {
		t.Fatalf("the original's task (pid %d) must outlive its agent, have pid %d", origPid, pid)
	}
	return repl, m.procs()[repl.ID]
}

// An inner agent killed with SIGKILL (its pid read through the outer
// alloc's directory) is brought back by the outer restart policy, after a
// delay longer than the heartbeat TTL: meanwhile its node is disconnected,
// the work unknown and replaced, and the work's process (its own process
// group) keeps running without its agent. The restarted agent has the same
// data dir, so it is the same node; it re-attaches to the process, and the
// reconnect keeps the original (keep_original): one live alloc, the same
// pid, [unknown, running] in AllocStates, the replacement's process gone.
func TestNestedKilledAgentRestartedByOuterPolicy(t *testing.T) {
	start := time.Now()
	m := newTaskMarker(t)
	c := startNestedCluster(t)
	a, _, orig, origPid := startPair(t, c, "killed", innerSpec{restartDelay: 8 * time.Second}, "work", m, `
    disconnect {
      lost_after = "5m"
      reconcile  = "keep_original"
    }`)
	nodeID, outerAlloc := a.nodeID(), a.alloc().ID
	pid := a.pidFromAlloc()
	if marked := a.pid(); pid != marked {
		t.Fatalf("alloc/agent.pid says %d, the marked inner agent process is %d", pid, marked)
	}

	killedAt := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill inner agent pid %d: %v", pid, err)
	}
	repl, _ := waitForReplacement(t, c.server, a, "work", orig, origPid, m)
	t.Logf("disconnected and replaced %s after the kill", time.Since(killedAt).Round(time.Millisecond))

	a.waitReady(30 * time.Second)
	t.Logf("inner agent back and ready %s after the kill", time.Since(killedAt).Round(time.Millisecond))
	if newPid := a.pidFromAlloc(); newPid == pid || newPid != a.pid() {
		t.Fatalf("after the restart alloc/agent.pid says %d (killed: %d, marked process: %d)", newPid, pid, a.pid())
	}
	if id := a.alloc().ID; id != outerAlloc {
		t.Fatalf("the outer restart policy should restart the agent in place (alloc %s), have alloc %s", outerAlloc[:8], id[:8])
	}
	if id := a.nodeID(); id != nodeID {
		t.Fatalf("restarted inner agent registered as node %s, want the same node %s", id, nodeID)
	}
	allocs := assertSoleWork(t, c.server, "work", orig.ID, origPid, m)
	for _, al := range allocs {
		switch al.ID {
		case orig.ID:
			assertUnknownThenRunning(t, al)
		case repl.ID:
			if al.DesiredStatus != "stop" || !al.ClientTerminalStatus() {
				t.Fatalf("replacement %s is desired=%s client=%s, want stopped", al.ID[:8], al.DesiredStatus, al.ClientStatus)
			}
		}
	}
	t.Logf("scenario took %s", time.Since(start).Round(time.Millisecond))
}

// Stopping an inner agent's job shuts the agent down gracefully (SIGINT
// from the outer client), and a client agent leaves its tasks running when
// it shuts down: the work's process outlives its agent. With no agent, the
// node misses its heartbeats: disconnected, work unknown, replaced on B.
// Running the job again starts a new outer alloc; with a data dir outside
// the outer alloc dir the agent is the same node, re-attaches to the
// process it left, and the reconnect keeps the original (keep_original).
func TestNestedStoppedAgentJobRunAgain(t *testing.T) {
	start := time.Now()
	m := newTaskMarker(t)
	c := startNestedCluster(t)
	a, _, orig, origPid := startPair(t, c, "stopped", innerSpec{keepState: true}, "work", m, `
    disconnect {
      lost_after = "5m"
      reconcile  = "keep_original"
    }`)
	nodeID, outerAlloc, agentPid := a.nodeID(), a.alloc().ID, a.pid()

	stoppedAt := time.Now()
	if out, code := c.server.cli("job", "stop", a.jobID); code != 0 {
		t.Fatalf("job stop %s: exit %d: %s", a.jobID, code, out)
	}
	waitFor(t, 30*time.Second, func() (bool, string) {
		al, _, err := c.server.api().Allocations().Info(outerAlloc, nil)
		if err != nil {
			return false, err.Error()
		}
		return al.ClientTerminalStatus() && a.pid() == 0, fmt.Sprintf("outer alloc is %s, inner agent pid %d (was %d)", al.ClientStatus, a.pid(), agentPid)
	})
	t.Logf("inner agent stopped %s after job stop", time.Since(stoppedAt).Round(time.Millisecond))
	repl, _ := waitForReplacement(t, c.server, a, "work", orig, origPid, m)
	t.Logf("disconnected and replaced %s after job stop", time.Since(stoppedAt).Round(time.Millisecond))

	rerunAt := time.Now()
	a.run()
	if id := a.alloc().ID; id == outerAlloc {
		t.Fatalf("job run after job stop should make a new outer alloc, have the old one %s", id[:8])
	}
	if id := a.nodeID(); id != nodeID {
		t.Fatalf("re-run inner agent registered as node %s, want the same node %s (same data dir)", id, nodeID)
	}
	allocs := assertSoleWork(t, c.server, "work", orig.ID, origPid, m)
	for _, al := range allocs {
		switch al.ID {
		case orig.ID:
			assertUnknownThenRunning(t, al)
		case repl.ID:
			if al.DesiredStatus != "stop" || !al.ClientTerminalStatus() {
				t.Fatalf("replacement %s is desired=%s client=%s, want stopped", al.ID[:8], al.DesiredStatus, al.ClientStatus)
			}
		}
	}
	t.Logf("reconnect settled %s after job run; scenario took %s", time.Since(rerunAt).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// The same stop and re-run without a disconnect block: the node goes down,
// the work is lost and replaced on B. The agent, run again with its data
// dir, re-attaches to the process it left, reads that the server stopped
// the alloc and stops it: desired stop wins over resuming, and only the
// replacement's process is left.
func TestNestedStoppedAgentLostWorkIsStopped(t *testing.T) {
	start := time.Now()
	m := newTaskMarker(t)
	c := startNestedCluster(t)
	a, _, orig, origPid := startPair(t, c, "lost", innerSpec{keepState: true}, "work", m, "")
	nodeID := a.nodeID()

	stoppedAt := time.Now()
	if out, code := c.server.cli("job", "stop", a.jobID); code != 0 {
		t.Fatalf("job stop %s: exit %d: %s", a.jobID, code, out)
	}
	repl := waitForLostAndReplaced(t, c.server, a, orig, origPid, m)
	t.Logf("node down, work lost and replaced %s after job stop", time.Since(stoppedAt).Round(time.Millisecond))

	a.run()
	if id := a.nodeID(); id != nodeID {
		t.Fatalf("re-run inner agent registered as node %s, want the same node %s (same data dir)", id, nodeID)
	}
	assertSoleWork(t, c.server, "work", repl.ID, m.procs()[repl.ID], m)
	t.Logf("scenario took %s", time.Since(start).Round(time.Millisecond))
}

// waitForLostAndReplaced waits until the inner agent's node is down, orig
// lost (its process, which outlived the agent, still pid) and a
// replacement running; it returns the replacement.
func waitForLostAndReplaced(t *testing.T, s *agent, ia *innerAgent, orig *api.Allocation, origPid int, m taskMarker) *api.Allocation {
	t.Helper()
	repl := waitForAwayAndReplaced(t, s, "work", orig, m, 30*time.Second, ia.status, "down", "lost")
	if pid := m.procs()[orig.ID]; pid != origPid {
		t.Fatalf("the original's task (pid %d) should outlive its agent until the agent returns, have pid %d", origPid, pid)
	}
	return repl
}

// An inner agent whose data dir lived in its outer alloc dir loses its
// state when its job is stopped and run again: the new agent registers as
// a new node under the same name, and the old node stays down. Nothing is
// left that knows the old task, so its process survives, orphaned, beside
// the replacement: a machine whose client state is wiped leaks the work it
// ran. The test asserts exactly that (and kills the orphan at cleanup), so
// a change in this behaviour is noticed.
func TestNestedWipedAgentOrphansItsWork(t *testing.T) {
	start := time.Now()
	m := newTaskMarker(t)
	c := startNestedCluster(t)
	a, _, orig, origPid := startPair(t, c, "wiped", innerSpec{}, "work", m, "")
	oldNode := a.nodeID()

	if out, code := c.server.cli("job", "stop", a.jobID); code != 0 {
		t.Fatalf("job stop %s: exit %d: %s", a.jobID, code, out)
	}
	repl := waitForLostAndReplaced(t, c.server, a, orig, origPid, m)
	a.run()
	newNode := a.nodeID()
	if newNode == oldNode {
		t.Fatalf("an agent with a fresh data dir should register a new node, have the old one %s", oldNode)
	}
	if n, _, err := c.server.api().Nodes().Info(oldNode, nil); err != nil || n.Status != "down" {
		t.Fatalf("the old node should stay down: %v, %v", n, err)
	}
	waitForEvalsDone(t, c.server, "work")
	check := func() (bool, string) {
		allocs, err := jobAllocs(c.server, "work")
		if err != nil {
			return false, err.Error()
		}
		running := runningAllocs(allocs)
		if len(running) != 1 || running[0].ID != repl.ID {
			return false, fmt.Sprintf("want only %s running: %s", repl.ID[:8], describeAllocs(allocs))
		}
		procs := m.procs()
		return len(procs) == 2 && procs[orig.ID] == origPid && procs[repl.ID] != 0, fmt.Sprintf("want the orphan %d and the replacement's process, have %v", origPid, procs)
	}
	waitForStable(t, 20*time.Second, 3*time.Second, check)
	t.Logf("scenario took %s", time.Since(start).Round(time.Millisecond))
}
