package nomad

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/nomad/heartbeat"
	"github.com/drover-sched/drover/structs"
)

// sendHeartbeat is heartbeat for goroutines other than the test's.
func sendHeartbeat(s *Server, n *structs.Node) error {
	var resp structs.NodeUpdateResponse
	req := &structs.NodeUpdateStatusRequest{NodeID: n.ID, SecretID: n.SecretID, Status: structs.NodeStatusReady}
	return s.RPC("Node.UpdateStatus", req, &resp)
}

func lastNodeEvent(s *Server, id string) string {
	n, err := s.State().NodeByID(nil, id)
	if err != nil || n == nil || len(n.Events) == 0 {
		return ""
	}
	return n.Events[len(n.Events)-1].Message
}

// steppingHeartbeatDeps is the heartbeater's StatusWriter with a step
// that runs after the heartbeater decided to change a node's status and
// before the change is committed, with the node's lock held.
type steppingHeartbeatDeps struct {
	server heartbeat.StatusWriter // the server's; set once, before the server starts
	step   atomic.Pointer[func(nodeID string)]
}

func (d *steppingHeartbeatDeps) wrap(server heartbeat.StatusWriter) heartbeat.StatusWriter {
	d.server = server
	return d
}

// beforeApply sets the step.
func (d *steppingHeartbeatDeps) beforeApply(step func(nodeID string)) { d.step.Store(&step) }

func (d *steppingHeartbeatDeps) ApplyNodeStatuses(req *structs.NodeBatchUpdateStatusRequest) ([]string, error) {
	if step := d.step.Load(); step != nil {
		for _, u := range req.Updates {
			(*step)(u.NodeID)
		}
	}
	return d.server.ApplyNodeStatuses(req)
}

// A heartbeat that arrives after the heartbeater saw the node's timer
// expired, but before it wrote the node down, must not leave a live node
// down: either the heartbeat wins or it writes the node ready again.
func TestHeartbeatRacingAnInvalidationLeavesTheNodeReady(t *testing.T) {
	clock := clock.NewFake(time.Unix(1_800_000_000, 0))
	deps := &steppingHeartbeatDeps{}
	s := testServerWith(t, func(c *Config) {
		c.Clock = clock
		c.MinHeartbeatTTL = 10 * time.Second
		c.HeartbeatGrace = 5 * time.Second
	}, serverOptions{wrapNodeStatusWriter: deps.wrap})
	WaitForLeader(t, 5*time.Second, s)
	node := itNode("n1")
	registerNode(t, s, node)
	h := s.heartbeats

	reached := make(chan struct{})
	beat := make(chan error, 1)
	slippedIn := make(chan bool, 1)
	deps.beforeApply(func(id string) {
		close(reached)
		go func() { beat <- sendHeartbeat(s, node) }()
		// Hold the invalidation between its check and its apply until
		// the heartbeat has either finished (it slipped in between) or
		// waits for the node's lock.
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		deadline := time.After(5 * time.Second)
		for h.LockContenders(id) < 2 {
			select {
			case err := <-beat:
				beat <- err
				slippedIn <- true
				return
			case <-deadline:
				return
			case <-tick.C:
			}
		}
		slippedIn <- false
	})

	// Every TTL is at most 2*10s + 5s grace.
	clock.Advance(26 * time.Second)
	select {
	case <-reached:
	case <-time.After(5 * time.Second):
		t.Fatal("the heartbeater never tried to mark the silent node")
	}
	select {
	case err := <-beat:
		if err != nil {
			t.Fatalf("heartbeat: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the heartbeat never finished")
	}
	if <-slippedIn {
		t.Log("the heartbeat was not held back by the invalidation")
	}
	WaitFor(t, 5*time.Second, func() (bool, string) {
		st := nodeStatus(s, node.ID)
		return st == structs.NodeStatusReady, "a node that heartbeated is " + st
	})
	if !h.Armed(node.ID) {
		t.Fatal("a node that heartbeated has no timer")
	}
	if got := lastNodeEvent(s, node.ID); got != "Node status down -> ready" {
		t.Fatalf("the invalidation committed first, so the heartbeat must have written ready again; last event %q", got)
	}
}

// On a real server, a node of a batch that heartbeats after the batch was
// decided but before it committed waits for the commit and writes itself
// ready again; the silent nodes of its batch stay down.
func TestAHeartbeatRacingABatchLeavesItsNodeReady(t *testing.T) {
	clock := clock.NewFake(time.Unix(1_800_000_000, 0))
	deps := &steppingHeartbeatDeps{}
	s := testServerWith(t, func(c *Config) {
		c.Clock = clock
		c.MinHeartbeatTTL = 10 * time.Second
		c.HeartbeatGrace = 5 * time.Second
	}, serverOptions{wrapNodeStatusWriter: deps.wrap})
	WaitForLeader(t, 5*time.Second, s)
	nodes := []*structs.Node{itNode("n1"), itNode("n2"), itNode("n3")}
	for _, n := range nodes {
		registerNode(t, s, n)
	}
	racer := nodes[1]
	h := s.heartbeats
	reached := make(chan struct{})
	var once sync.Once
	beat := make(chan error, 1)
	deps.beforeApply(func(id string) {
		if id != racer.ID {
			return
		}
		first := false
		once.Do(func() { first = true })
		if !first {
			return // marked again after its heartbeat's TTL ran out
		}
		close(reached)
		go func() { beat <- sendHeartbeat(s, racer) }()
		// Hold the batch until the heartbeat waits for the node's lock
		// (not t.Fatal here: this is the heartbeater's goroutine).
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for deadline := time.Now().Add(10 * time.Second); h.LockContenders(id) < 2 && time.Now().Before(deadline); {
			<-tick.C
		}
	})
	// Every TTL is at most 2*10s + 5s grace. Then the loop paces its
	// batches (50ms a node): move the fake clock on in such steps until
	// each silent node has been marked, the racer once.
	clock.Advance(26 * time.Second)
	raced := false
	silentDown := func() bool {
		return nodeStatus(s, nodes[0].ID) == structs.NodeStatusDown && nodeStatus(s, nodes[2].ID) == structs.NodeStatusDown
	}
	for deadline := time.Now().Add(20 * time.Second); !raced || !silentDown(); {
		if time.Now().After(deadline) {
			t.Fatalf("raced %v; statuses %s %s %s", raced,
				nodeStatus(s, nodes[0].ID), nodeStatus(s, racer.ID), nodeStatus(s, nodes[2].ID))
		}
		select {
		case err := <-beat:
			if err != nil {
				t.Fatalf("heartbeat: %v", err)
			}
			raced = true
		case <-time.After(5 * time.Millisecond):
			select {
			case <-reached:
				if !raced {
					continue // the batch holds the racer: no time passes meanwhile
				}
			default:
			}
			clock.Advance(50 * time.Millisecond)
		}
	}
	if st := nodeStatus(s, racer.ID); st != structs.NodeStatusReady {
		t.Fatalf("the node that heartbeated is %s", st)
	}
	if got := lastNodeEvent(s, racer.ID); got != "Node status down -> ready" {
		t.Fatalf("its batch committed first, so the heartbeat must have written ready again; last event %q", got)
	}
}

// advanceKeeping lets d of fake time pass in small steps while the keep
// nodes heartbeat.
func advanceKeeping(t *testing.T, s *Server, clock *clock.Fake, d time.Duration, keep ...*structs.Node) {
	t.Helper()
	const step = 5 * time.Second
	for left := d; left > 0; left -= step {
		for _, n := range keep {
			heartbeatNode(t, s, n)
		}
		clock.Advance(min(step, left))
	}
}

func nodeUpdateEvals(t *testing.T, s *Server, jobID, nodeID string) int {
	t.Helper()
	evals, err := s.State().EvalsByJob(nil, structs.DefaultNamespace, jobID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evals {
		if e.TriggeredBy == structs.EvalTriggerNodeUpdate && e.NodeID == nodeID {
			n++
		}
	}
	return n
}

// disconnectOne places one alloc of a job whose group tolerates a
// disconnect of lostAfter and lets its node miss its heartbeat. It returns
// the node that went away and the one that stays.
func disconnectOne(t *testing.T, s *Server, clock *clock.Fake, lostAfter time.Duration) (away, other *structs.Node, orig *structs.Allocation) {
	t.Helper()
	n1, n2 := itNode("n1"), itNode("n2")
	registerNode(t, s, n1)
	registerNode(t, s, n2)
	job := itJob("web", 1)
	// keep_original: a test whose client reports the original after it
	// comes back keeps it on its node.
	job.TaskGroups[0].Disconnect = &structs.DisconnectStrategy{LostAfter: lostAfter, Reconcile: structs.ReconcileKeepOriginal}
	orig = placeOne(t, s, job)
	away, other = n1, n2
	if orig.NodeID == n2.ID {
		away, other = n2, n1
	}
	expireNode(t, s, clock, away.ID, other)
	if st := nodeStatus(s, away.ID); st != structs.NodeStatusDisconnected {
		t.Fatalf("want disconnected, got %s", st)
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		a, _ := s.State().AllocByID(nil, orig.ID)
		return a.ClientStatus == structs.AllocClientStatusUnknown, "alloc still " + a.ClientStatus
	})
	return away, other, orig
}

// untilWindowEnd is how long from now until a node disconnected with a
// lost_after of lostAfter must go down: its window counts from when it was
// marked (disconnectOne's fake time overshoots that by a varying amount,
// since it steps the clock while the mark is being written).
func untilWindowEnd(t *testing.T, s *Server, clock *clock.Fake, nodeID string, lostAfter time.Duration) time.Duration {
	t.Helper()
	node, err := s.State().NodeByID(nil, nodeID)
	if err != nil || node == nil {
		t.Fatalf("node %s: %v", nodeID, err)
	}
	return time.Unix(node.StatusUpdatedAt, 0).Add(lostAfter + s.config.HeartbeatGrace).Sub(clock.Now())
}

// A disconnected node that never comes back goes down once the largest
// disconnect window of its allocs (plus grace) has passed, with a node
// event and node-update evals, so it can be garbage collected.
func TestDisconnectedNodeGoesDownAfterItsWindow(t *testing.T) {
	s, clock := startFakeClockServer(t)
	away, other, _ := disconnectOne(t, s, clock, 10*time.Minute)
	if !s.heartbeats.Armed(away.ID) {
		t.Fatal("a disconnected node must have a timer for its disconnect window")
	}
	// Stop the workers so the scheduler does not mark the unknown alloc
	// lost at its own timeout: the node going down must then ask for a
	// decision about it.
	s.stopWorkers()
	before := nodeUpdateEvals(t, s, "web", away.ID)

	advanceKeeping(t, s, clock, untilWindowEnd(t, s, clock, away.ID, 10*time.Minute)-time.Second, other)
	if st := nodeStatus(s, away.ID); st != structs.NodeStatusDisconnected {
		t.Fatalf("node marked %s within its disconnect window", st)
	}
	advanceKeeping(t, s, clock, 2*time.Second, other)
	WaitFor(t, 5*time.Second, func() (bool, string) {
		st := nodeStatus(s, away.ID)
		return st == structs.NodeStatusDown, "node still " + st
	})
	if got := lastNodeEvent(s, away.ID); got != "Node did not reconnect within its disconnect window" {
		t.Fatalf("node event not recorded: %q", got)
	}
	if after := nodeUpdateEvals(t, s, "web", away.ID); after != before+1 {
		t.Fatalf("going down must create a node-update eval for the job: %d before, %d after", before, after)
	}
	if st := nodeStatus(s, other.ID); st != structs.NodeStatusReady {
		t.Fatalf("the node that kept beating is %s", st)
	}
}

// A disconnected node that heartbeats within its window is ready again and
// back on the normal TTL: the window's timer no longer applies.
func TestDisconnectedNodeThatHeartbeatsInTimeIsReady(t *testing.T) {
	s, clock := startFakeClockServer(t)
	away, other, orig := disconnectOne(t, s, clock, 10*time.Minute)
	advanceKeeping(t, s, clock, 5*time.Minute, other)
	heartbeatNode(t, s, away)
	if st := nodeStatus(s, away.ID); st != structs.NodeStatusReady {
		t.Fatalf("a node that heartbeated within its window is %s", st)
	}
	// Its client reports the alloc, as a client that is back does (an
	// alloc left unreported would be lost after the report window).
	if err := reportAlloc(s, orig, structs.AllocClientStatusRunning); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		a, _ := s.State().AllocByID(nil, orig.ID)
		return !a.NeedsToReconnect() && a.DesiredStatus == structs.AllocDesiredStatusRun, "original not reconnected yet"
	})
	// Past the old window, still beating: still ready.
	advanceKeeping(t, s, clock, 6*time.Minute, other, away)
	if st := nodeStatus(s, away.ID); st != structs.NodeStatusReady {
		t.Fatalf("a beating node went %s when its old disconnect window ended", st)
	}
	// Silent again: the normal TTL applies, and it is disconnected again
	// (its alloc still tolerates it), not held by the old window.
	expireNode(t, s, clock, away.ID, other)
	if st := nodeStatus(s, away.ID); st != structs.NodeStatusDisconnected {
		t.Fatalf("want disconnected again, got %s", st)
	}
}

// A new term arms a disconnected node for the rest of its window (or the
// failover TTL, if longer), so the node still goes down on time.
func TestNewTermArmsDisconnectedNodesForTheRestOfTheirWindow(t *testing.T) {
	s, clock := startFakeClockServer(t)
	away, other, _ := disconnectOne(t, s, clock, 10*time.Minute)
	advanceKeeping(t, s, clock, 2*time.Minute, other)

	s.leadershipChanged(true) // lost and regained: a new term
	WaitFor(t, 5*time.Second, func() (bool, string) {
		return s.heartbeats.Armed(away.ID), "the new term has no timer for the disconnected node"
	})
	advanceKeeping(t, s, clock, untilWindowEnd(t, s, clock, away.ID, 10*time.Minute)-time.Second, other)
	if st := nodeStatus(s, away.ID); st != structs.NodeStatusDisconnected {
		t.Fatalf("node marked %s within its disconnect window", st)
	}
	advanceKeeping(t, s, clock, 2*time.Second, other)
	WaitFor(t, 5*time.Second, func() (bool, string) {
		st := nodeStatus(s, away.ID)
		return st == structs.NodeStatusDown, fmt.Sprintf("node still %s", st)
	})
}
