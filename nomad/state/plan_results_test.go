package state

import (
	"errors"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// planFixture is a store with a job, a running alloc "old" on n1 and a
// deployment, at index 10.
func planFixture(t *testing.T) (*StateStore, *structs.Job, *structs.Allocation) {
	t.Helper()
	s := testStateStore(t)
	job := mustJob(t, s, 1, testJob("web"))
	old := testAlloc("old", job, "n1")
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{old}) }))
	running := old.Copy()
	running.ClientStatus = structs.AllocClientStatusRunning
	mustNoErr(t, s.Write(10, func(tx *Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{running}) }))
	stored, _ := s.AllocByID(nil, "old")
	return s, job, stored
}

func TestUpsertPlanResultsAppliesEverythingInOneWrite(t *testing.T) {
	s, job, old := planFixture(t)
	plan := &structs.Plan{Job: job, NodeUpdate: map[string][]*structs.Allocation{}, NodeAllocation: map[string][]*structs.Allocation{}}
	plan.AppendLostAlloc(old, "node is down", time.Unix(50, 0))
	place := testAlloc("new", job, "n2")
	place.Job = nil
	place.DeploymentID = "d1"
	deployment := &structs.Deployment{ID: "d1", Namespace: "default", JobID: "web", JobCreateIndex: 1,
		Status: structs.DeploymentStatusRunning, TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 1}}}
	preempt := testEval("pe1", job)
	preempt.TriggeredBy = structs.EvalTriggerPreemption

	req := &structs.ApplyPlanResultsRequest{
		AllocsStopped:   plan.NodeUpdate["n1"],
		AllocsUpdated:   []*structs.Allocation{place},
		Job:             job,
		Deployment:      deployment,
		PreemptionEvals: []*structs.Evaluation{preempt},
		UpdatedAt:       5000,
	}
	mustNoErr(t, s.Write(11, func(tx *Txn) error { return tx.UpsertPlanResults(req) }))

	gotOld, _ := s.AllocByID(nil, "old")
	if gotOld.DesiredStatus != structs.AllocDesiredStatusStop || gotOld.ClientStatus != structs.AllocClientStatusLost ||
		gotOld.DesiredDescription != "node is down" || gotOld.ModifyTime != 5000 || gotOld.AllocModifyIndex != 11 {
		t.Fatalf("stopped alloc = %+v", gotOld)
	}
	if st := gotOld.LastClientStatusState(); st == nil || st.Value != structs.AllocClientStatusLost {
		t.Fatalf("lost not recorded in AllocStates: %+v", gotOld.AllocStates)
	}
	gotNew, _ := s.AllocByID(nil, "new")
	if gotNew == nil || gotNew.Job != job || gotNew.CreateTime != 5000 || gotNew.CreateIndex != 11 {
		t.Fatalf("placed alloc = %+v", gotNew)
	}
	d, _ := s.DeploymentByID(nil, "d1")
	if d == nil || d.TaskGroups["web"].PlacedAllocs != 1 || d.CreateIndex != 11 {
		t.Fatalf("deployment = %+v", d)
	}
	if e, _ := s.EvalByID(nil, "pe1"); e == nil {
		t.Fatal("preemption eval missing")
	}
	sum, _ := s.JobSummaryByID(nil, "default", "web")
	if got := sum.Summary["web"]; got.Lost != 1 || got.Starting != 1 || got.Running != 0 {
		t.Fatalf("summary = %+v", got)
	}
	for _, table := range []string{TableAllocs, TableDeployments, TableEvals} {
		if idx, _ := s.Index(table); idx != 11 {
			t.Fatalf("%s index = %d, want 11", table, idx)
		}
	}
}

func TestUpsertPlanResultsIsAllOrNothing(t *testing.T) {
	s, job, old := planFixture(t)
	mustNoErr(t, s.Write(11, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{testAlloc("stopped", job, "n1")}) }))
	stop := old.Copy()
	stop.DesiredStatus = structs.AllocDesiredStatusStop
	mustNoErr(t, s.Write(12, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{stop}) }))
	before, _ := s.LatestIndex()

	// The plan places a new alloc, creates a deployment, stops a live
	// alloc, and (the broken part) wants the stopped one to run again.
	stopLive, _ := s.AllocByID(nil, "stopped")
	stopLive = stopLive.Copy()
	stopLive.DesiredStatus = structs.AllocDesiredStatusStop
	revive := old.Copy()
	revive.DesiredStatus = structs.AllocDesiredStatusRun
	req := &structs.ApplyPlanResultsRequest{
		AllocsStopped:   []*structs.Allocation{stopLive},
		AllocsUpdated:   []*structs.Allocation{testAlloc("new", job, "n2"), revive},
		Deployment:      &structs.Deployment{ID: "d1", Namespace: "default", JobID: "web"},
		PreemptionEvals: []*structs.Evaluation{testEval("pe1", job)},
		UpdatedAt:       1,
	}
	err := s.Write(13, func(tx *Txn) error { return tx.UpsertPlanResults(req) })
	if !errors.Is(err, structs.ErrInvalidTransition) {
		t.Fatalf("err = %v, want ErrInvalidTransition", err)
	}
	if a, _ := s.AllocByID(nil, "new"); a != nil {
		t.Fatal("placement of a refused plan was applied")
	}
	if a, _ := s.AllocByID(nil, "stopped"); a.DesiredStatus != structs.AllocDesiredStatusRun {
		t.Fatal("stop of a refused plan was applied")
	}
	if d, _ := s.DeploymentByID(nil, "d1"); d != nil {
		t.Fatal("deployment of a refused plan was applied")
	}
	if e, _ := s.EvalByID(nil, "pe1"); e != nil {
		t.Fatal("eval of a refused plan was applied")
	}
	if after, _ := s.LatestIndex(); after != before {
		t.Fatalf("latest index moved from %d to %d", before, after)
	}
}

func TestPlanStopsMergeOntoTheStoredAlloc(t *testing.T) {
	s, job, old := planFixture(t)
	// The scheduler's copy is stale (pending, other description) and
	// trimmed (no task states); only the stop decision must be applied.
	stale := testAlloc("old", job, "n1")
	stale.DesiredStatus = structs.AllocDesiredStatusEvict
	stale.DesiredDescription = "preempted"
	stale.PreemptedByAllocation = "big"
	stale.FollowupEvalID = "follow"
	mustNoErr(t, s.Write(11, func(tx *Txn) error {
		return tx.UpsertPlanResults(&structs.ApplyPlanResultsRequest{AllocsStopped: []*structs.Allocation{stale}, UpdatedAt: 9})
	}))
	got, _ := s.AllocByID(nil, "old")
	if got.ClientStatus != structs.AllocClientStatusRunning || got.DesiredStatus != structs.AllocDesiredStatusEvict ||
		got.PreemptedByAllocation != "big" || got.FollowupEvalID != "follow" || got.CreateIndex != old.CreateIndex {
		t.Fatalf("merged stop = %+v", got)
	}
	mustNoErr(t, s.Write(12, func(tx *Txn) error {
		return tx.UpsertPlanResults(&structs.ApplyPlanResultsRequest{AllocsStopped: []*structs.Allocation{testAlloc("never-existed", job, "n1")}})
	}))
	if a, _ := s.AllocByID(nil, "never-existed"); a != nil {
		t.Fatal("a stop created an alloc")
	}
}
