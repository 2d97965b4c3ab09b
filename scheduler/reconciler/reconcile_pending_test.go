package reconciler

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// A pending alloc has not been reported started, so there is nothing on its
// client to reconnect to: when its node disconnects it is lost and replaced
// at once, as on a down node, instead of waiting as unknown in its slot.
func TestPendingAllocOnADisconnectedNodeIsLostAndReplaced(t *testing.T) {
	for _, replace := range []bool{true, false} {
		w := newWorld(withDisconnect(testJob(structs.JobTypeService, 1), 10*time.Minute, replace, ""), "n1")
		w.setNode("n2", structs.NodeStatusDisconnected)
		a := w.add(0, "n2", structs.AllocClientStatusPending)
		res := w.reconcile()
		if len(res.Disconnects) != 0 {
			t.Fatalf("replace=%v: pending alloc marked unknown: %+v", replace, res.Disconnects)
		}
		if s := findStop(res, a.ID); s == nil || !s.Lost || s.Description != DescLost {
			t.Fatalf("replace=%v: want the pending alloc stopped as lost, got %+v", replace, res.Stops)
		}
		r := placesBy(res, PlaceLost)
		if len(r) != 1 || r[0].Previous.ID != a.ID || r[0].Name != a.Name {
			t.Fatalf("replace=%v: want one lost replacement, got %+v", replace, res.Places)
		}
		if len(res.Followups) != 0 {
			t.Fatalf("replace=%v: a lost alloc needs no disconnect timeout, got %+v", replace, res.Followups)
		}
		// Applied, the next evaluation changes nothing: one live alloc.
		w.apply(res, w.firstReady)
		w.evalID = "eval-1"
		if again := w.reconcile(); len(again.Stops)+len(again.Places)+len(again.Disconnects) != 0 {
			t.Fatalf("replace=%v: second evaluation not a no-op: %+v", replace, again)
		}
	}
}

// A system alloc that is pending on a node that disconnects is lost too,
// and (system allocs never move) not placed anywhere else.
func TestSystemPendingAllocOnADisconnectedNodeIsLostNotMoved(t *testing.T) {
	job := withDisconnect(testJob(structs.JobTypeSystem, 1), 10*time.Minute, true, "")
	nodes := map[string]*structs.Node{
		"n1": testNode("n1", structs.NodeStatusReady),
		"n2": testNode("n2", structs.NodeStatusDisconnected),
	}
	a := &structs.Allocation{ID: "a2", Name: "web.web[0]", JobID: job.ID, Job: job, TaskGroup: "web", NodeID: "n2",
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending}
	b := &structs.Allocation{ID: "a1", Name: "web.web[0]", JobID: job.ID, Job: job, TaskGroup: "web", NodeID: "n1",
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning}
	res := ReconcileSystem(SystemInput{
		Job: job, Eval: &structs.Evaluation{ID: "e1"}, Allocs: []*structs.Allocation{a, b}, Nodes: nodes,
		Eligible: map[string]*structs.Node{"n1": nodes["n1"]}, Now: t0, NewID: func() string { return "f" },
	})
	if s := findStop(res, a.ID); s == nil || !s.Lost {
		t.Fatalf("want the pending system alloc lost, got stops %+v disconnects %+v", res.Stops, res.Disconnects)
	}
	if len(res.Places) != 0 || len(res.Disconnects) != 0 {
		t.Fatalf("want nothing placed or marked unknown, got %+v", res)
	}
}
