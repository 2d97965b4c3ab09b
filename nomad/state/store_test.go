package state

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// script is a fixed sequence of writes touching every table.
func script(t *testing.T, s *StateStore) {
	t.Helper()
	mustNoErr(t, s.Write(1, func(tx *Txn) error { return tx.UpsertNode(testNode("n1"), nil) }))
	job := testJob("web", "a", "b")
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertJobWithEval(job, testEval("e1", job)) }))
	stored, _ := s.JobByID(nil, "default", "web")
	a1, a2 := testAlloc("a1", stored, "n1"), testAlloc("a2", stored, "n1")
	a2.TaskGroup = "b"
	mustNoErr(t, s.Write(3, func(tx *Txn) error {
		return tx.UpsertPlanResults(&structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{a1, a2}, Job: stored, UpdatedAt: 30})
	}))
	r := a1.Copy()
	r.ClientStatus = structs.AllocClientStatusRunning
	mustNoErr(t, s.Write(4, func(tx *Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{r}) }))
	plan := &structs.Plan{NodeUpdate: map[string][]*structs.Allocation{}, NodeAllocation: map[string][]*structs.Allocation{}}
	plan.AppendUnknownAlloc(a2, "node disconnected", "", time.Unix(50, 0))
	mustNoErr(t, s.Write(5, func(tx *Txn) error {
		return tx.UpsertPlanResults(&structs.ApplyPlanResultsRequest{AllocsUpdated: plan.NodeAllocation["n1"], UpdatedAt: 50})
	}))
	mustNoErr(t, s.Write(6, func(tx *Txn) error { return tx.UpdateNodeStatus("n1", structs.NodeStatusDisconnected, 60, nil) }))
	mustNoErr(t, s.Write(7, func(tx *Txn) error { return tx.KVSet("k", "v") }))
}

func TestSameWritesGiveTheSameState(t *testing.T) {
	s1, s2 := testStateStore(t), testStateStore(t)
	script(t, s1)
	script(t, s2)
	for _, id := range []string{"a1", "a2"} {
		x, _ := s1.AllocByID(nil, id)
		y, _ := s2.AllocByID(nil, id)
		if !structs.DeepEqual(x, y) {
			t.Fatalf("alloc %s differs between two stores given the same writes", id)
		}
	}
	j1, _ := s1.JobByID(nil, "default", "web")
	j2, _ := s2.JobByID(nil, "default", "web")
	sum1, _ := s1.JobSummaryByID(nil, "default", "web")
	sum2, _ := s2.JobSummaryByID(nil, "default", "web")
	if !structs.DeepEqual(j1, j2) || !structs.DeepEqual(sum1, sum2) {
		t.Fatal("job or summary differs")
	}
	if got := sum1.Summary["b"]; got.Unknown != 1 {
		t.Fatalf("group b summary = %+v, want one unknown", got)
	}
}

func TestWritesNeverMutateWhatReadersHold(t *testing.T) {
	s := testStateStore(t)
	script(t, s)
	alloc, _ := s.AllocByID(nil, "a1")
	job, _ := s.JobByID(nil, "default", "web")
	sum, _ := s.JobSummaryByID(nil, "default", "web")
	node, _ := s.NodeByID(nil, "n1")
	before := []any{alloc.Copy(), job.Copy(), sum.Copy(), node.Copy()}

	done := alloc.Copy()
	done.ClientStatus = structs.AllocClientStatusComplete
	mustNoErr(t, s.Write(10, func(tx *Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{done}) }))
	stop := alloc.Copy()
	stop.DesiredStatus = structs.AllocDesiredStatusStop
	mustNoErr(t, s.Write(11, func(tx *Txn) error {
		return tx.UpsertPlanResults(&structs.ApplyPlanResultsRequest{AllocsStopped: []*structs.Allocation{stop}})
	}))
	mustNoErr(t, s.Write(12, func(tx *Txn) error {
		return tx.UpdateAllocsDesiredTransitions(map[string]*structs.DesiredTransition{"a1": {Reschedule: structs.BoolPtr(true)}}, nil, nil)
	}))
	changed := job.Copy()
	changed.Priority = 90
	mustNoErr(t, s.Write(13, func(tx *Txn) error { return tx.UpsertJob(changed) }))
	mustNoErr(t, s.Write(14, func(tx *Txn) error {
		return tx.UpdateNodeDrain("n1", &structs.DrainStrategy{}, false, 140, &structs.NodeEvent{Message: "drain"}, DrainOperator{})
	}))

	after := []any{alloc, job, sum, node}
	for i := range before {
		if !structs.DeepEqual(before[i], after[i]) {
			t.Fatalf("object %d read before the writes was changed in place", i)
		}
	}
}
