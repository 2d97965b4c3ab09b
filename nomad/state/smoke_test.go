package state

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

func TestStoreCoreFlow(t *testing.T) {
	s := TestStateStore(t)
	mustNoErr(t, s.UpsertNode(1, testNode("n1")))
	job := mustJob(t, s, 2, testJob("web"))
	mustNoErr(t, s.UpsertEvals(2, []*structs.Evaluation{testEval("e1", job)}))
	if j, _ := s.JobByID(nil, "default", "web"); j.Status != structs.JobStatusPending {
		t.Fatalf("status = %q, want pending", j.Status)
	}
	a := testAlloc("a1", job, "n1")
	a.Job = nil
	mustNoErr(t, s.UpsertPlanResults(3, &structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{a}, Job: job, UpdatedAt: 100}))
	got, err := s.AllocByID(nil, "a1")
	mustNoErr(t, err)
	if got == nil || got.Job == nil || got.AllocModifyIndex != 3 || got.CreateTime != 100 {
		t.Fatalf("alloc = %+v", got)
	}
	if j, _ := s.JobByID(nil, "default", "web"); j.Status != structs.JobStatusRunning {
		t.Fatalf("status = %q, want running", j.Status)
	}
	li, _ := s.LatestIndex()
	if li != 3 {
		t.Fatalf("latest index = %d", li)
	}
}
