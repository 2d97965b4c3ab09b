package nomad

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// heartbeatNode sends one client heartbeat for n.
func heartbeatNode(t *testing.T, s *Server, n *structs.Node) {
	t.Helper()
	var resp structs.NodeUpdateResponse
	req := &structs.NodeUpdateStatusRequest{NodeID: n.ID, SecretID: n.SecretID, Status: structs.NodeStatusReady}
	if err := s.RPC("Node.UpdateStatus", req, &resp); err != nil {
		t.Fatalf("heartbeat from %s: %v", n.ID, err)
	}
	if resp.HeartbeatTTL <= 0 {
		t.Fatalf("heartbeat answered without a TTL: %+v", resp)
	}
}

func nodeStatus(s *Server, id string) string {
	n, err := s.State().NodeByID(nil, id)
	if err != nil || n == nil {
		return ""
	}
	return n.Status
}

// expireNode lets fake time pass until target misses its heartbeat while
// keepAlive keeps beating.
func expireNode(t *testing.T, s *Server, clock *clock.Fake, target string, keepAlive *structs.Node) {
	t.Helper()
	for i := 0; i < 20 && nodeStatus(s, target) == structs.NodeStatusReady; i++ {
		heartbeatNode(t, s, keepAlive)
		clock.Advance(5 * time.Second)
		// Until the target's timer is either still armed or its expiry
		// has been written: advancing meanwhile would move the clock
		// past the start of the node's new status, and tests count
		// windows from there.
		WaitFor(t, 5*time.Second, func() (bool, string) {
			st := nodeStatus(s, target)
			return st != structs.NodeStatusReady || s.heartbeats.Armed(target), "expiry of " + target + " not written yet"
		})
	}
	WaitFor(t, 5*time.Second, func() (bool, string) {
		st := nodeStatus(s, target)
		return st != structs.NodeStatusReady, "node " + target + " still " + st
	})
}

func allEvalsDone(s *Server, jobID string) (bool, string) {
	evals, err := s.State().EvalsByJob(nil, structs.DefaultNamespace, jobID)
	if err != nil {
		return false, err.Error()
	}
	for _, e := range evals {
		if e.Status == structs.EvalStatusPending && (e.WaitUntil.IsZero()) {
			return false, "eval " + e.ID + " (" + e.TriggeredBy + ") pending"
		}
	}
	return true, ""
}

// fakeClockNackTimeout is the eval nack timeout of servers on a fake
// clock. A test's clock jump stands for time passing, not for a worker
// holding an eval that long: with the default minute, a jump taken while a
// worker was between planning and acking nacked the eval, and its
// redelivery then waited on a clock nobody advanced, stalling the job's
// later evals. The broker's own tests cover nack timeouts.
const fakeClockNackTimeout = 10_000 * time.Hour

func startFakeClockServer(t *testing.T) (*Server, *clock.Fake) {
	clock := clock.NewFake(time.Unix(1_800_000_000, 0))
	s := testServer(t, func(c *Config) {
		c.Clock = clock
		c.NumSchedulers = 2
		c.EvalNackTimeout = fakeClockNackTimeout
	})
	WaitForLeader(t, 5*time.Second, s)
	return s, clock
}

// registerOne registers a job of count 1 and returns its alloc once placed.
func registerOne(t *testing.T, s *Server, job *structs.Job) *structs.Allocation {
	t.Helper()
	registerJob(t, s, job)
	var a *structs.Allocation
	WaitFor(t, 10*time.Second, func() (bool, string) {
		if live := desiredRunning(jobAllocs(t, s, job.ID)); len(live) == 1 {
			a = live[0]
		}
		return a != nil, "no alloc placed"
	})
	return a
}

// placeOne is registerOne with the client reporting the alloc running.
func placeOne(t *testing.T, s *Server, job *structs.Job) *structs.Allocation {
	t.Helper()
	a := registerOne(t, s, job)
	if err := reportAlloc(s, a, structs.AllocClientStatusRunning); err != nil {
		t.Fatal(err)
	}
	return a
}

func TestMissedHeartbeatMarksNodeDownAndReplacesItsAllocs(t *testing.T) {
	s, clock := startFakeClockServer(t)
	n1, n2 := itNode("n1"), itNode("n2")
	registerNode(t, s, n1)
	registerNode(t, s, n2)
	orig := placeOne(t, s, itJob("web", 1))
	other := n1
	if orig.NodeID == n1.ID {
		other = n2
	}

	expireNode(t, s, clock, orig.NodeID, other)
	if st := nodeStatus(s, orig.NodeID); st != structs.NodeStatusDown {
		t.Fatalf("a node without disconnect-tolerant allocs must go down, got %s", st)
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		a, _ := s.State().AllocByID(nil, orig.ID)
		live := desiredRunning(jobAllocs(t, s, "web"))
		return a.ClientStatus == structs.AllocClientStatusLost && len(live) == 1 && live[0].NodeID == other.ID,
			fmt.Sprintf("orig %s, %d live", a.ClientStatus, len(live))
	})
	repl := desiredRunning(jobAllocs(t, s, "web"))[0]
	if repl.PreviousAllocation != orig.ID {
		t.Fatalf("replacement must point at the lost alloc, got %q", repl.PreviousAllocation)
	}
	if lost, _ := s.State().AllocByID(nil, orig.ID); lost.NextAllocation != repl.ID {
		t.Fatalf("the lost alloc must point at its replacement, got %q", lost.NextAllocation)
	}
	n, _ := s.State().NodeByID(nil, orig.NodeID)
	if last := n.Events[len(n.Events)-1]; last.Message != "Node heartbeat missed" {
		t.Fatalf("node event not recorded: %+v", last)
	}
}

// The reconnect protocol, step by step (seed 004).
func TestReconnectProtocolKeepsExactlyOneAlloc(t *testing.T) {
	s, clock := startFakeClockServer(t)
	n1, n2 := itNode("n1"), itNode("n2")
	registerNode(t, s, n1)
	registerNode(t, s, n2)
	job := itJob("web", 1)
	job.TaskGroups[0].Disconnect = &structs.DisconnectStrategy{LostAfter: time.Hour, Reconcile: structs.ReconcileKeepOriginal}
	orig := placeOne(t, s, job)
	away, other := n1, n2
	if orig.NodeID == n2.ID {
		away, other = n2, n1
	}

	// The node drops off: it is disconnected, not down, its alloc is
	// unknown with a history entry, and a replacement runs elsewhere.
	expireNode(t, s, clock, away.ID, other)
	if st := nodeStatus(s, away.ID); st != structs.NodeStatusDisconnected {
		t.Fatalf("want disconnected, got %s", st)
	}
	var repl *structs.Allocation
	WaitFor(t, 10*time.Second, func() (bool, string) {
		a, _ := s.State().AllocByID(nil, orig.ID)
		for _, x := range desiredRunning(jobAllocs(t, s, "web")) {
			if x.ID != orig.ID {
				repl = x
			}
		}
		return a.ClientStatus == structs.AllocClientStatusUnknown && a.NeedsToReconnect() && repl != nil,
			"orig " + a.ClientStatus
	})
	if err := reportAlloc(s, repl, structs.AllocClientStatusRunning); err != nil {
		t.Fatal(err)
	}

	// 1. A report before the heartbeat is refused.
	err := reportAlloc(s, orig, structs.AllocClientStatusRunning)
	if err == nil || !strings.Contains(err.Error(), structs.ErrNodeNotReady.Error()) {
		t.Fatalf("UpdateAlloc before the heartbeat must be refused as not ready, got %v", err)
	}

	// 2. The heartbeat makes the node ready and schedules the job; that
	// pass must leave the unknown alloc alone.
	heartbeatNode(t, s, away)
	WaitFor(t, 10*time.Second, func() (bool, string) { return allEvalsDone(s, "web") })
	a, _ := s.State().AllocByID(nil, orig.ID)
	if a.DesiredStatus != structs.AllocDesiredStatusRun || a.ClientStatus != structs.AllocClientStatusUnknown {
		t.Fatalf("a pass between heartbeat and report touched the unknown alloc: desired %s client %s", a.DesiredStatus, a.ClientStatus)
	}
	if live := desiredRunning(jobAllocs(t, s, "web")); len(live) != 2 {
		t.Fatalf("want the original and one replacement, got %d live allocs", len(live))
	}

	// 3. The report is accepted; the reconnect eval keeps exactly one.
	if err := reportAlloc(s, orig, structs.AllocClientStatusRunning); err != nil {
		t.Fatalf("UpdateAlloc after the heartbeat must be accepted: %v", err)
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		live := desiredRunning(jobAllocs(t, s, "web"))
		return len(live) == 1 && live[0].ID == orig.ID, fmt.Sprintf("%d live allocs", len(live))
	})
	a, _ = s.State().AllocByID(nil, orig.ID)
	var history []string
	for _, st := range a.AllocStates {
		history = append(history, st.Value)
	}
	if len(history) != 2 || history[0] != structs.AllocClientStatusUnknown || history[1] != structs.AllocClientStatusRunning {
		t.Fatalf("AllocStates must record the disconnect and the reconnect, got %v", history)
	}
	r, _ := s.State().AllocByID(nil, repl.ID)
	if r.DesiredStatus != structs.AllocDesiredStatusStop {
		t.Fatalf("the replacement must be stopped, got %s", r.DesiredStatus)
	}
	WaitFor(t, 10*time.Second, func() (bool, string) { return allEvalsDone(s, "web") })
	if live := desiredRunning(jobAllocs(t, s, "web")); len(live) != 1 {
		t.Fatalf("later evaluations must not reconnect again: %d live allocs", len(live))
	}
}

// A job stopped while its node was disconnected stays stopped when the node
// comes back: the reconnected alloc is stopped, not resumed.
func TestJobStoppedDuringDisconnectStaysStopped(t *testing.T) {
	s, clock := startFakeClockServer(t)
	n1, n2 := itNode("n1"), itNode("n2")
	registerNode(t, s, n1)
	registerNode(t, s, n2)
	job := itJob("web", 1)
	job.TaskGroups[0].Disconnect = &structs.DisconnectStrategy{LostAfter: time.Hour}
	orig := placeOne(t, s, job)
	away, other := n1, n2
	if orig.NodeID == n2.ID {
		away, other = n2, n1
	}
	expireNode(t, s, clock, away.ID, other)
	WaitFor(t, 10*time.Second, func() (bool, string) {
		a, _ := s.State().AllocByID(nil, orig.ID)
		return a.ClientStatus == structs.AllocClientStatusUnknown, "not unknown yet"
	})
	var dresp structs.JobDeregisterResponse
	if err := s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: "web"}, &dresp); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 10*time.Second, func() (bool, string) { return allEvalsDone(s, "web") })
	heartbeatNode(t, s, away)
	if err := reportAlloc(s, orig, structs.AllocClientStatusRunning); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		a, _ := s.State().AllocByID(nil, orig.ID)
		return a.DesiredStatus == structs.AllocDesiredStatusStop, "reconnected alloc of a stopped job desired " + a.DesiredStatus
	})
	if live := desiredRunning(jobAllocs(t, s, "web")); len(live) != 0 {
		t.Fatalf("a stopped job has %d live allocs after reconnect", len(live))
	}
}
