//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"
)

// A client whose server hangs (SIGSTOP) while the other servers carry on
// must take its heartbeats to them before the servers' deadline for it
// runs out: its node stays ready and its allocs are neither lost nor
// replaced. Heartbeats to the frozen server only ever time out; if the
// client kept sending them there, the leader would mark the node down
// (TTL 4 s + grace 8 s) long before the 20-second freeze ended.
func TestFrozenFollowerLeavesItsClientsReady(t *testing.T) {
	freezeClientsServer(t, false)
}

// The same when the frozen server is the leader: the others elect a new
// one, and the client, whose calls to the old leader time out, takes its
// heartbeats to them in time.
func TestFrozenLeaderLeavesItsClientsReady(t *testing.T) {
	freezeClientsServer(t, true)
}

// freezeClientsServer runs a client whose first server is the leader (or
// a follower), freezes that server for 20 s and fails the test if the
// client's node or its allocs change meanwhile or after the thaw.
func freezeClientsServer(t *testing.T, leaderFirst bool) {
	servers := startServerClusterTTL(t, 3, "4s", "8s")
	leaderAddr := waitForAgreedLeader(t, servers, 30*time.Second, "")
	var frozen *agent
	var rest []*agent
	for _, s := range servers {
		if frozen == nil && (s.rpcAddr() == leaderAddr) == leaderFirst {
			frozen = s
		} else {
			rest = append(rest, s)
		}
	}
	// The frozen server comes first in the client's list, so that is
	// where its calls go until it fails one.
	startClient(t, "c1", append([]*agent{frozen}, rest...)...)
	watcher := rest[0]
	waitForReadyNodes(t, watcher, "c1")

	registerJob(t, watcher, mockJob("frozen", 2), 10*time.Second)
	waitFor(t, 30*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(watcher, "frozen")
		if err != nil {
			return false, err.Error()
		}
		return len(allocs) == 2 && len(runningAllocs(allocs)) == 2, describeAllocs(allocs)
	})
	allocs, err := jobAllocs(watcher, "frozen")
	if err != nil {
		t.Fatal(err)
	}
	marks := lastNodeEvents(t, watcher, "c1")

	thaw := frozen.freeze()
	t.Cleanup(thaw)
	frozenAt := time.Now()
	var slowest time.Duration
	waitForStable(t, 60*time.Second, 20*time.Second, func() (bool, string) {
		began := time.Now()
		changed, err := pauseChurn(watcher, "frozen", allocs)
		slowest = max(slowest, time.Since(began))
		if err != nil {
			return false, err.Error()
		}
		if changed != "" {
			t.Fatalf("%s into the freeze: %s", time.Since(frozenAt).Round(time.Millisecond), changed)
		}
		return true, ""
	})
	thaw()
	t.Logf("thawed %s after freezing; the slowest look through %s took %s", time.Since(frozenAt).Round(time.Millisecond),
		watcher.name, slowest.Round(time.Millisecond))
	// Reads through the other servers go to whichever leads: none waits
	// on the frozen one past its replacement (raft's heartbeat timeout
	// and an election; before, they waited for yamux's keepalive, 38 s).
	if slowest > 10*time.Second {
		t.Errorf("a look through %s took %s", watcher.name, slowest.Round(time.Millisecond))
	}

	for name, since := range marks {
		for _, ev := range nodeByName(t, watcher, name).Events {
			if ev.CreateIndex > since && (ev.Message == "Node heartbeat missed" || strings.HasPrefix(ev.Message, "Node status")) {
				t.Fatalf("node %s changed status while a server was frozen: %q", name, ev.Message)
			}
		}
	}
	waitForEvalsDone(t, watcher, "frozen")
	if changed, err := pauseChurn(watcher, "frozen", allocs); err != nil || changed != "" {
		t.Fatalf("after the thaw: %s %v", changed, err)
	}
}
