package nomad

import (
	"context"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// raft's LeaderCh keeps only its newest value, so "lost and regained" can
// arrive as two trues in a row. The second must start a new term: the old
// term's broker state is dropped and rebuilt from state, and the heartbeat
// timers start over with the failover TTL.
func TestLeadershipRegainedStartsANewTerm(t *testing.T) {
	clock := clock.NewFake(time.Unix(1_800_000_000, 0))
	s := testServer(t, func(c *Config) {
		c.Clock = clock
		c.NumSchedulers = 0
		c.MinHeartbeatTTL = 10 * time.Second
		c.HeartbeatGrace = 5 * time.Second
		c.FailoverHeartbeatTTL = 2 * time.Minute
	})
	WaitForLeader(t, 5*time.Second, s)
	node := itNode("n1")
	registerNode(t, s, node)
	registerJob(t, s, itJob("web", 1))

	// The old term handed the eval to a worker that will never answer.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	eval, _, err := s.evalBroker.Dequeue(ctx, []string{structs.JobTypeService})
	if err != nil || eval == nil {
		t.Fatalf("dequeue: %v %v", eval, err)
	}
	if st := s.evalBroker.Stats(); st.TotalReady != 0 || st.TotalUnacked != 1 {
		t.Fatalf("want the eval unacked, got %+v", st)
	}

	s.leadershipChanged(true)

	if !s.IsLeader() {
		t.Fatal("the server must lead again")
	}
	if st := s.evalBroker.Stats(); st.TotalReady != 1 || st.TotalUnacked != 0 {
		t.Fatalf("the new term must restore the eval from state: %+v", st)
	}
	WaitFor(t, 5*time.Second, func() (bool, string) {
		return s.heartbeats.Armed(node.ID), "the new term armed no timer for the node"
	})
	// Past the node's normal TTL (at most 2*10s + 5s): the failover TTL
	// holds. Advance fires due timers before it returns.
	clock.Advance(time.Minute)
	if !s.heartbeats.Armed(node.ID) {
		t.Fatal("the new term must give the node the failover TTL")
	}
}

// Once Shutdown has begun, establishing leadership starts nothing.
func TestNoLeadershipAfterShutdown(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	if err := s.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if err := s.establishLeadership(); err == nil {
		t.Fatal("establishLeadership after Shutdown must fail")
	}
	if s.leading() || s.IsLeader() {
		t.Fatal("a shut down server runs leader loops")
	}
}
