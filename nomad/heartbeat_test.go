package nomad

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/structs"
)

func countStatus(s *Server, status string) int {
	it, err := s.State().Nodes(nil)
	if err != nil {
		return -1
	}
	n := 0
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if raw.(*structs.Node).Status == status {
			n++
		}
	}
	return n
}

// When many nodes go silent at once, the leader marks them down at most
// MaxNodeDownPerSecond per second, and a node that heartbeats while queued
// is never marked.
func TestSimultaneousExpiriesAreRateLimited(t *testing.T) {
	clock := clock.NewFake(time.Unix(1_800_000_000, 0))
	s := testServer(t, func(c *Config) {
		c.Clock = clock
		// One node per 20s. Advance walks time through the expiries (15s
		// to 25s) while the first write is in flight, so that write can
		// seem to take up to 11s; at this rate that still allows a batch
		// of one and a wait before the next (at 1/s it would rightly
		// allow an 11-node batch at once).
		c.MaxNodeDownPerSecond = 0.05
		c.MinHeartbeatTTL = 10 * time.Second
		c.HeartbeatGrace = 5 * time.Second
	})
	WaitForLeader(t, 5*time.Second, s)
	var nodes []*structs.Node
	for i := 0; i < 5; i++ {
		n := itNode(fmt.Sprintf("n%d", i))
		registerNode(t, s, n)
		nodes = append(nodes, n)
	}
	// Every TTL is at most 2*10s + 5s grace: after 26s all have expired.
	clock.Advance(26 * time.Second)
	WaitFor(t, 5*time.Second, func() (bool, string) {
		return countStatus(s, structs.NodeStatusDown) == 1, fmt.Sprintf("%d down", countStatus(s, structs.NodeStatusDown))
	})
	// The rest wait in the queue; one of them heartbeats meanwhile.
	var survivor *structs.Node
	for _, n := range nodes {
		if nodeStatus(s, n.ID) == structs.NodeStatusReady {
			survivor = n
			break
		}
	}
	heartbeatNode(t, s, survivor)
	if got := countStatus(s, structs.NodeStatusDown); got != 1 {
		t.Fatalf("without time passing only one node may be marked, got %d", got)
	}
	// Let fake time pass in small steps until the other three are down,
	// the survivor heartbeating all along.
	for i := 0; i < 200 && countStatus(s, structs.NodeStatusDown) < 4; i++ {
		before := countStatus(s, structs.NodeStatusDown)
		heartbeatNode(t, s, survivor)
		clock.Advance(time.Second)
		// Give the heartbeater a moment to act on the new time; whether it
		// does within this step or a later one does not change the result.
		eventually(100*time.Millisecond, func() bool { return countStatus(s, structs.NodeStatusDown) > before })
	}
	WaitFor(t, 5*time.Second, func() (bool, string) {
		return countStatus(s, structs.NodeStatusDown) == 4, fmt.Sprintf("%d down", countStatus(s, structs.NodeStatusDown))
	})
	if st := nodeStatus(s, survivor.ID); st != structs.NodeStatusReady {
		t.Fatalf("a node that heartbeated while queued was marked %s", st)
	}
	// The marks are spaced by 1/MaxNodeDownPerSecond (20s) of fake time,
	// less what a write seemed to take: at most 11s for the first (see
	// above), 1s (a step) after.
	var marked []time.Time
	for _, n := range nodes {
		node, _ := s.State().NodeByID(nil, n.ID)
		if node.Status != structs.NodeStatusDown {
			continue
		}
		ev := node.Events[len(node.Events)-1]
		if ev.Message != "Node heartbeat missed" {
			t.Fatalf("last event of %s is %q", n.ID, ev.Message)
		}
		marked = append(marked, ev.Timestamp)
	}
	sort.Slice(marked, func(i, j int) bool { return marked[i].Before(marked[j]) })
	for i := 1; i < len(marked); i++ {
		if gap := marked[i].Sub(marked[i-1]); gap < 9*time.Second || (i > 1 && gap < 19*time.Second) {
			t.Fatalf("nodes marked down %s apart, want at least 9s after the first and 19s after that (rate 1/20s): %v", gap, marked)
		}
	}
}

func TestHeartbeatTTLScalesWithTheFleet(t *testing.T) {
	s := testServer(t, func(c *Config) {
		c.MinHeartbeatTTL = time.Second
		c.MaxHeartbeatsPerSecond = 10
	})
	WaitForLeader(t, 5*time.Second, s)
	h := s.heartbeats
	for _, tc := range []struct {
		nodes    int
		min, max time.Duration
	}{
		{1, time.Second, 2 * time.Second},
		{100, 10 * time.Second, 20 * time.Second},
		{1000, 100 * time.Second, 200 * time.Second},
	} {
		for i := 0; i < 20; i++ {
			ttl := h.ResetTTL("x", tc.nodes)
			if ttl < tc.min || ttl >= tc.max {
				t.Fatalf("%d nodes: ttl %s outside [%s, %s)", tc.nodes, ttl, tc.min, tc.max)
			}
		}
	}
}

// eventually polls cond for up to d and reports whether it held.
func eventually(d time.Duration, cond func() bool) bool {
	return wait.Holds(d, cond, wait.Every(5*time.Millisecond))
}

// After a leader change every node first gets the failover TTL, so an
// election does not mark the fleet down before clients find the new
// leader; a node silent past that TTL still goes down.
//
// Raft may move leadership again among the two servers left (see
// election_helpers_test.go); every new leader rightly gives the node a
// fresh failover TTL, so the test follows the node's timer on whichever
// server leads rather than on the first new leader.
func TestNewLeaderGivesNodesTheFailoverTTL(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	const failoverTTL = 2 * time.Minute
	clock := clock.NewFake(start)
	var servers []*Server
	for i := 0; i < 3; i++ {
		i := i
		servers = append(servers, testServer(t, func(c *Config) {
			c.BootstrapExpect = 3
			c.NodeName = fmt.Sprintf("s%d", i)
			c.Clock = clock
			c.MinHeartbeatTTL = 10 * time.Second
			c.HeartbeatGrace = 5 * time.Second
			c.FailoverHeartbeatTTL = failoverTTL
		}))
	}
	for _, s := range servers {
		for _, o := range servers {
			if o != s {
				s.Join(o.RPCAddr())
			}
		}
	}
	node := itNode("n1")
	writeThroughElections(t, WaitForLeader(t, 10*time.Second, servers...), "Node.Register",
		&structs.NodeRegisterRequest{Node: node}, &structs.NodeUpdateResponse{})

	leader := WaitForLeader(t, 10*time.Second, servers...)
	var rest []*Server
	for _, s := range servers {
		if s != leader {
			rest = append(rest, s)
		}
	}
	leader.Shutdown()

	// The clock has not moved since the node registered, so whichever
	// server leads now armed the node's timer at start: for the failover
	// TTL, not the normal TTL (at most 2*10s + 5s).
	newLeader := waitForLeaderWhere(t, 10*time.Second, rest, "with a timer for the node", func(s *Server) bool {
		return s.heartbeats.Armed(node.ID)
	})
	if deadline, _ := newLeader.heartbeats.Deadline(node.ID); !deadline.Equal(start.Add(failoverTTL)) {
		t.Fatalf("new leader armed the node until %s, want the failover TTL: %s", deadline, start.Add(failoverTTL))
	}

	// Well past the node's normal TTL, but within the failover TTL: the
	// node stays ready.
	clock.Advance(60 * time.Second)
	if eventually(300*time.Millisecond, func() bool { return nodeStatus(newLeader, node.ID) != structs.NodeStatusReady }) {
		t.Fatalf("node marked %s within the failover TTL", nodeStatus(newLeader, node.ID))
	}

	expireOnLeader(t, clock, rest, node.ID)
}

// expireOnLeader advances the clock past the node's heartbeat deadline on
// whichever of servers leads and waits until that leader has marked the
// node down. If leadership moves first (the leader steps down, or its
// write fails and it re-arms the timer to retry), the node has a new
// timer, and the clock is advanced past that one, a bounded number of
// times.
func expireOnLeader(t *testing.T, clock *clock.Fake, servers []*Server, nodeID string) {
	t.Helper()
	const maxTerms = 5
	for term := 0; term < maxTerms; term++ {
		var down bool
		s := waitForLeaderWhere(t, 10*time.Second, servers, "with a timer for the node or the node down", func(s *Server) bool {
			down = nodeStatus(s, nodeID) == structs.NodeStatusDown
			return down || s.heartbeats.Armed(nodeID)
		})
		if down {
			return
		}
		deadline, ok := s.heartbeats.Deadline(nodeID)
		if !ok {
			continue // the leader stepped down in between
		}
		clock.Advance(deadline.Sub(clock.Now()) + time.Second)
		moved := false
		WaitFor(t, 5*time.Second, func() (bool, string) {
			st := nodeStatus(s, nodeID)
			if st == structs.NodeStatusDown {
				return true, ""
			}
			// A timer due after now was armed after the advance.
			if d, ok := s.heartbeats.Deadline(nodeID); !s.IsLeader() || ok && d.After(clock.Now()) {
				moved = true
				return true, ""
			}
			return false, "node still " + st
		})
		if !moved {
			return
		}
		t.Logf("leadership moved while the node expired; following the node's new timer")
	}
	t.Fatalf("node %s not marked down across %d leader terms", nodeID, maxTerms)
}
