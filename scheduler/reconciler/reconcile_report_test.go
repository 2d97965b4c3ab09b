package reconciler

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// reportWorld is a count-1 service job whose original alloc on n2 was
// marked unknown ten minutes ago (and, with replace, replaced on n1); n2
// has been ready again since readyAt and its client has not reported it.
func reportWorld(replace bool, readyAt time.Time) (w *world, orig *structs.Allocation) {
	w = newWorld(withDisconnect(testJob(structs.JobTypeService, 1), 15*time.Minute, replace, ""), "n1")
	w.setNodeSince("n2", structs.NodeStatusReady, readyAt)
	orig = disconnected(w.add(0, "n2", structs.AllocClientStatusRunning), t0.Add(-10*time.Minute))
	if replace {
		r := w.add(0, "n1", structs.AllocClientStatusRunning)
		r.PreviousAllocation, orig.NextAllocation = orig.ID, r.ID
	}
	return w, orig
}

func reportTimeouts(evals []*structs.Evaluation) []*structs.Evaluation {
	var out []*structs.Evaluation
	for _, e := range evals {
		if e.TriggeredBy == structs.EvalTriggerReconnectReportTimeout {
			out = append(out, e)
		}
	}
	return out
}

// An unknown alloc on a node that is ready again is left alone while its
// client may still report it, but not forever: the evaluation that finds it
// creates a follow-up due when the report window ends, later evaluations do
// not make another, and the follow-up marks it lost and replaces it (unless
// a replacement already runs).
func TestUnreportedAllocIsLostWhenTheReportWindowEnds(t *testing.T) {
	for _, replace := range []bool{true, false} {
		readyAt := t0.Add(-time.Minute)
		w, orig := reportWorld(replace, readyAt)
		res := w.reconcile()
		if len(res.Stops)+len(res.Places)+len(res.Disconnects)+len(res.Updates) != 0 {
			t.Fatalf("replace=%v: an unreported alloc inside the window was touched: %+v", replace, res)
		}
		f := reportTimeouts(res.Followups)
		deadline := readyAt.Add(DefaultReportWindow)
		if len(f) != 1 || !f[0].WaitUntil.Equal(deadline) || f[0].Status != structs.EvalStatusPending {
			t.Fatalf("replace=%v: want one report timeout due at %v, got %+v", replace, deadline, res.Followups)
		}
		w.apply(res, w.firstReady)

		// Another evaluation inside the window makes no second follow-up.
		w.evalID, w.now = "eval-1", t0.Add(time.Minute)
		if again := w.reconcile(); len(again.Followups) != 0 || len(again.Stops) != 0 {
			t.Fatalf("replace=%v: second evaluation: followups %+v stops %+v", replace, again.Followups, again.Stops)
		}

		// The follow-up runs when due.
		w.evalID, w.now = f[0].ID, deadline
		res = w.reconcile()
		s := findStop(res, orig.ID)
		if s == nil || !s.Lost || s.Description != DescUnreported {
			t.Fatalf("replace=%v: want the unreported alloc lost, got %+v", replace, res.Stops)
		}
		lost := placesBy(res, PlaceLost)
		if replace && len(res.Places) != 0 {
			t.Fatalf("replace=true: the running replacement holds the slot, yet placed %+v", res.Places)
		}
		if !replace && (len(lost) != 1 || lost[0].Previous.ID != orig.ID) {
			t.Fatalf("replace=false: want the lost alloc replaced, got %+v", res.Places)
		}
		if len(reportTimeouts(res.Followups)) != 0 {
			t.Fatalf("replace=%v: a lost alloc needs no more follow-ups: %+v", replace, res.Followups)
		}
	}
}

// The broker releases no eval before its WaitUntil, so a report timeout
// acts even when the clock of the server that runs it is a little behind.
func TestReportTimeoutActsOnTheEvalsDueTimeWhenTheClockIsEarly(t *testing.T) {
	readyAt := t0.Add(-time.Minute)
	w, orig := reportWorld(true, readyAt)
	deadline := readyAt.Add(DefaultReportWindow)
	w.evals = append(w.evals, &structs.Evaluation{ID: "report-timeout", JobID: "web", Type: structs.JobTypeService,
		Status: structs.EvalStatusPending, TriggeredBy: structs.EvalTriggerReconnectReportTimeout, WaitUntil: deadline})
	w.evalID, w.now = "report-timeout", deadline.Add(-2*time.Second)
	res := w.reconcile()
	if s := findStop(res, orig.ID); s == nil || !s.Lost {
		t.Fatalf("want the alloc lost by the eval's due time, got %+v (followups %+v)", res.Stops, res.Followups)
	}
}

// The window is an input: a shorter one acts sooner.
func TestReportWindowIsAnInput(t *testing.T) {
	w, orig := reportWorld(true, t0.Add(-time.Minute))
	in := w.input()
	in.ReportWindow = 30 * time.Second
	res := Reconcile(in)
	if s := findStop(res, orig.ID); s == nil || !s.Lost {
		t.Fatalf("want the alloc lost after a 30s window, got %+v", res.Stops)
	}
}

// A disconnect-timeout eval that runs after the node came back does not
// make the unreported alloc lost early: the client still has its window.
func TestDisconnectTimeoutAfterTheNodeCameBackWaitsForTheReport(t *testing.T) {
	w, orig := reportWorld(true, t0.Add(-time.Minute))
	orig.FollowupEvalID = "timeout-eval"
	w.evals = append(w.evals, &structs.Evaluation{ID: "timeout-eval", JobID: "web", Type: structs.JobTypeService,
		Status: structs.EvalStatusPending, TriggeredBy: structs.EvalTriggerMaxDisconnectTimeout, WaitUntil: t0})
	w.evalID = "timeout-eval"
	res := w.reconcile()
	if len(res.Stops) != 0 {
		t.Fatalf("unreported alloc stopped before its report window ended: %+v", res.Stops)
	}
	if len(reportTimeouts(res.Followups)) != 1 {
		t.Fatalf("want a report timeout, got %+v", res.Followups)
	}
}

// A system alloc its client did not report after its node came back is
// lost, and a new one is placed on the same node (system allocs never
// move); before that, a follow-up is due at the end of the window.
func TestSystemUnreportedAllocIsLostAndRunAgainOnItsNode(t *testing.T) {
	job := withDisconnect(testJob(structs.JobTypeSystem, 1), 15*time.Minute, true, "")
	readyAt := t0.Add(-time.Minute)
	n := testNode("n1", structs.NodeStatusReady)
	n.StatusUpdatedAt = readyAt.Unix()
	a := disconnected(&structs.Allocation{ID: "a1", Name: "web.web[0]", JobID: job.ID, Job: job, TaskGroup: "web", NodeID: "n1",
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning}, t0.Add(-10*time.Minute))
	in := SystemInput{
		Job: job, Eval: &structs.Evaluation{ID: "e1", JobID: job.ID, Type: job.Type}, Allocs: []*structs.Allocation{a},
		Nodes: map[string]*structs.Node{"n1": n}, Eligible: map[string]*structs.Node{"n1": n}, Now: t0,
		NewID: func() string { return "f1" },
	}
	res := ReconcileSystem(in)
	if len(res.Stops)+len(res.Places) != 0 {
		t.Fatalf("inside the window: want nothing, got %+v", res)
	}
	f := reportTimeouts(res.Followups)
	if len(f) != 1 || !f[0].WaitUntil.Equal(readyAt.Add(DefaultReportWindow)) {
		t.Fatalf("want one report timeout, got %+v", res.Followups)
	}
	in.Eval, in.Now, in.Evals = f[0], f[0].WaitUntil, f
	res = ReconcileSystem(in)
	if s := findStop(res, a.ID); s == nil || !s.Lost || s.Description != DescUnreported {
		t.Fatalf("want the unreported system alloc lost, got %+v", res.Stops)
	}
	if len(res.Places) != 1 || res.Places[0].NodeID != "n1" {
		t.Fatalf("want a new alloc on n1, got %+v", res.Places)
	}
}
