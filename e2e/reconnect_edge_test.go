//go:build e2e

package e2e

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// disconnectAndReplace freezes the client running orig and waits until its
// node is disconnected, orig unknown and a replacement running elsewhere.
// It returns the replacement and the thaw function.
func disconnectAndReplace(t *testing.T, s *agent, clients map[string]*agent, jobID string, orig *api.Allocation, m taskMarker) (*api.Allocation, func()) {
	t.Helper()
	thaw := clients[orig.NodeName].freeze()
	repl := waitForAwayAndReplaced(t, s, jobID, orig, m, 20*time.Second,
		func() string { return nodeStatus(s, orig.NodeName) }, "disconnected", "unknown")
	return repl, thaw
}

// waitForOnlyRunning waits until exactly the alloc keep runs (desired and
// client side) and only its task process is alive, then, once every eval
// is done, checks that this still holds.
func waitForOnlyRunning(t *testing.T, s *agent, jobID string, keep *api.Allocation, m taskMarker) []*api.Allocation {
	t.Helper()
	check := func() (bool, string) {
		allocs, err := jobAllocs(s, jobID)
		if err != nil {
			return false, err.Error()
		}
		running := runningAllocs(allocs)
		if len(running) != 1 || running[0].ID != keep.ID {
			return false, fmt.Sprintf("want only %s running: %s", keep.ID[:8], describeAllocs(allocs))
		}
		procs := m.procs()
		return len(procs) == 1 && procs[keep.ID] != 0, fmt.Sprintf("task processes %v", procs)
	}
	waitFor(t, 30*time.Second, check)
	waitForEvalsDone(t, s, jobID)
	if ok, why := check(); !ok {
		t.Fatalf("after every eval finished: %s", why)
	}
	allocs, _ := jobAllocs(s, jobID)
	return allocs
}

// An original whose task dies while its client is cut off comes back
// failed: the reconnect keeps the replacement even under keep_original, and
// no third alloc runs (Nomad #12680's neighbourhood: a reconnecting alloc
// that is not running must not count as the survivor).
func TestOriginalThatFailedWhileDisconnectedIsNotKept(t *testing.T) {
	m := newTaskMarker(t)
	c := startFaultCluster(t, "c1", "c2")
	s := c.server
	registerJob(t, s, serviceJob("failed", m, `
    disconnect {
      lost_after = "5m"
      reconcile  = "keep_original"
    }
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }`), 10*time.Second)
	orig, origPid := waitForFirstAlloc(t, s, "failed", m)

	// The client is frozen first, so it cannot see its task die.
	repl, thaw := disconnectAndReplace(t, s, c.clients, "failed", orig, m)
	syscall.Kill(-origPid, syscall.SIGKILL)
	waitFor(t, 5*time.Second, func() (bool, string) { return m.procs()[orig.ID] == 0, "original's task alive" })

	thawedAt := time.Now()
	thaw()
	waitFor(t, 30*time.Second, func() (bool, string) {
		a, _, err := s.api().Allocations().Info(orig.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		return a.ClientTerminalStatus(), "original is " + a.ClientStatus
	})
	allocs := waitForOnlyRunning(t, s, "failed", repl, m)
	t.Logf("settled %s after the thaw: %s", time.Since(thawedAt), describeAllocs(allocs))
}

// A reconnect handled by a new leader: the leader is killed while a client
// is disconnected and replaced; the next leader restores the node's state
// and, when the client comes back, keeps the original and stops the
// replacement, exactly as the old leader would have.
func TestReconnectAcrossLeaderFailover(t *testing.T) {
	m := newTaskMarker(t)
	servers := startServerCluster(t, 3)
	clients := map[string]*agent{}
	for _, name := range []string{"c1", "c2"} {
		clients[name] = startClient(t, name, servers...)
	}
	waitForReadyNodes(t, servers[0], "c1", "c2")
	leaderAddr := waitForAgreedLeader(t, servers, 30*time.Second, "")
	var leader *agent
	var rest []*agent
	for _, s := range servers {
		if s.rpcAddr() == leaderAddr {
			leader = s
		} else {
			rest = append(rest, s)
		}
	}
	s := rest[0]
	registerJob(t, s, serviceJob("failover", m, `
    disconnect {
      lost_after = "5m"
      reconcile  = "keep_original"
    }`), 10*time.Second)
	orig, _ := waitForFirstAlloc(t, s, "failover", m)
	_, thaw := disconnectAndReplace(t, s, clients, "failover", orig, m)

	leader.kill()
	waitForAgreedLeader(t, rest, 30*time.Second, leaderAddr)
	thawedAt := time.Now()
	thaw()
	waitFor(t, 30*time.Second, func() (bool, string) {
		st := nodeStatus(s, orig.NodeName)
		return st == "ready", "thawed node is " + st
	})
	allocs := waitForOnlyRunning(t, s, "failover", orig, m)
	t.Logf("settled %s after the thaw", time.Since(thawedAt))
	for _, a := range allocs {
		if a.ID == orig.ID {
			assertUnknownThenRunning(t, a)
		}
	}
}

// A disconnect window that expires after a leader failover: the old leader
// scheduled the unknown alloc's lost_after follow-up; the new leader must
// restore it, mark the alloc lost on time, and the returning client then
// stops the lost alloc's task, leaving only the replacement.
func TestLostAfterExpiresAcrossLeaderFailover(t *testing.T) {
	m := newTaskMarker(t)
	servers := startServerCluster(t, 3)
	clients := map[string]*agent{}
	for _, name := range []string{"c1", "c2"} {
		clients[name] = startClient(t, name, servers...)
	}
	waitForReadyNodes(t, servers[0], "c1", "c2")
	leaderAddr := waitForAgreedLeader(t, servers, 30*time.Second, "")
	var leader *agent
	var rest []*agent
	for _, s := range servers {
		if s.rpcAddr() == leaderAddr {
			leader = s
		} else {
			rest = append(rest, s)
		}
	}
	s := rest[0]
	registerJob(t, s, serviceJob("expire", m, `
    disconnect {
      lost_after = "6s"
    }`), 10*time.Second)
	orig, _ := waitForFirstAlloc(t, s, "expire", m)
	repl, thaw := disconnectAndReplace(t, s, clients, "expire", orig, m)
	disconnectedAt := time.Now()

	leader.kill()
	waitForAgreedLeader(t, rest, 30*time.Second, leaderAddr)
	waitFor(t, 20*time.Second, func() (bool, string) {
		a, _, err := s.api().Allocations().Info(orig.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		return a.ClientStatus == "lost", "original is " + a.ClientStatus
	})
	t.Logf("original lost %s after the disconnect (lost_after 6s)", time.Since(disconnectedAt))

	thaw()
	waitFor(t, 30*time.Second, func() (bool, string) {
		st := nodeStatus(s, orig.NodeName)
		return st == "ready", "thawed node is " + st
	})
	waitForOnlyRunning(t, s, "expire", repl, m)
}
