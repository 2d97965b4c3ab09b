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
	servers := startServerClusterTTL(t, 3, "4s", "8s")
	leaderAddr := waitForAgreedLeader(t, servers, 30*time.Second, "")
	var leader, follower *agent
	order := []*agent{}
	for _, s := range servers {
		switch {
		case s.rpcAddr() == leaderAddr:
			leader = s
		case follower == nil:
			follower = s
			order = append([]*agent{s}, order...)
			continue
		}
		order = append(order, s)
	}
	// The follower comes first in the client's list, so that is where
	// its calls go until it fails one.
	startClient(t, "c1", order...)
	waitForReadyNodes(t, leader, "c1")

	registerJob(t, leader, mockJob("frozen", 2), 10*time.Second)
	waitFor(t, 30*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(leader, "frozen")
		if err != nil {
			return false, err.Error()
		}
		return len(allocs) == 2 && len(runningAllocs(allocs)) == 2, describeAllocs(allocs)
	})
	allocs, err := jobAllocs(leader, "frozen")
	if err != nil {
		t.Fatal(err)
	}
	marks := lastNodeEvents(t, leader, "c1")

	thaw := follower.freeze()
	t.Cleanup(thaw)
	frozenAt := time.Now()
	waitForStable(t, 60*time.Second, 20*time.Second, func() (bool, string) {
		changed, err := pauseChurn(leader, "frozen", allocs)
		if err != nil {
			return false, err.Error()
		}
		if changed != "" {
			t.Fatalf("%s into the freeze: %s", time.Since(frozenAt).Round(time.Millisecond), changed)
		}
		return true, ""
	})
	thaw()

	for name, since := range marks {
		for _, ev := range nodeByName(t, leader, name).Events {
			if ev.CreateIndex > since && (ev.Message == "Node heartbeat missed" || strings.HasPrefix(ev.Message, "Node status")) {
				t.Fatalf("node %s changed status while a server was frozen: %q", name, ev.Message)
			}
		}
	}
	waitForEvalsDone(t, leader, "frozen")
	if changed, err := pauseChurn(leader, "frozen", allocs); err != nil || changed != "" {
		t.Fatalf("after the thaw: %s %v", changed, err)
	}
}
