package state

import (
	"testing"

	"github.com/drover-sched/drover/structs"
	"github.com/google/go-cmp/cmp"
)

func TestJobStatusTransitions(t *testing.T) {
	type step func(t *testing.T, s *StateStore, job *structs.Job)
	placeAlloc := func(id, clientStatus, desired string) step {
		return func(t *testing.T, s *StateStore, job *structs.Job) {
			a := testAlloc(id, job, "n1")
			a.ClientStatus, a.DesiredStatus = clientStatus, desired
			mustNoErr(t, s.Write(20, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a}) }))
		}
	}
	eval := func(id, status string) step {
		return func(t *testing.T, s *StateStore, job *structs.Job) {
			e := testEval(id, job)
			e.Status = status
			mustNoErr(t, s.Write(21, func(tx *Txn) error { return tx.UpsertEvals([]*structs.Evaluation{e}) }))
		}
	}
	cases := []struct {
		name  string
		job   func() *structs.Job
		steps []step
		want  string
	}{
		{"a new job with nothing else is pending", func() *structs.Job { return testJob("j") }, nil, structs.JobStatusPending},
		{"a job with a pending eval and no allocs is pending", func() *structs.Job { return testJob("j") },
			[]step{eval("e1", structs.EvalStatusPending)}, structs.JobStatusPending},
		{"a job with a blocked eval and no allocs is pending", func() *structs.Job { return testJob("j") },
			[]step{eval("e1", structs.EvalStatusBlocked)}, structs.JobStatusPending},
		{"a job with a live alloc is running", func() *structs.Job { return testJob("j") },
			[]step{eval("e1", structs.EvalStatusComplete), placeAlloc("a1", structs.AllocClientStatusPending, structs.AllocDesiredStatusRun)}, structs.JobStatusRunning},
		{"a batch job whose allocs all finished is dead", func() *structs.Job { return testBatchJob("j") },
			[]step{eval("e1", structs.EvalStatusComplete), placeAlloc("a1", structs.AllocClientStatusComplete, structs.AllocDesiredStatusRun)}, structs.JobStatusDead},
		{"finished allocs with a pending eval is pending", func() *structs.Job { return testBatchJob("j") },
			[]step{placeAlloc("a1", structs.AllocClientStatusComplete, structs.AllocDesiredStatusRun), eval("e1", structs.EvalStatusPending)}, structs.JobStatusPending},
		{"a job whose only eval completed without allocs is dead", func() *structs.Job { return testJob("j") },
			[]step{eval("e1", structs.EvalStatusComplete)}, structs.JobStatusDead},
		{"a stopped job with only stopping allocs is dead", func() *structs.Job { j := testJob("j"); j.Stop = true; return j },
			[]step{placeAlloc("a1", structs.AllocClientStatusRunning, structs.AllocDesiredStatusStop), eval("e1", structs.EvalStatusPending)}, structs.JobStatusDead},
		{"a periodic parent is running", func() *structs.Job {
			j := testBatchJob("j")
			j.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "@daily"}
			return j
		}, nil, structs.JobStatusRunning},
		{"a stopped parameterized parent is dead", func() *structs.Job {
			j := testBatchJob("j")
			j.ParameterizedJob = &structs.ParameterizedJobConfig{}
			j.Stop = true
			return j
		}, nil, structs.JobStatusDead},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			job := mustJob(t, s, 10, tc.job())
			for _, st := range tc.steps {
				st(t, s, job)
			}
			got, _ := s.JobByID(nil, "default", job.ID)
			if got.Status != tc.want {
				t.Fatalf("status = %q, want %q", got.Status, tc.want)
			}
		})
	}
}

func TestJobStatusChangeBumpsModifyIndexAndKeepsVersionRowInStep(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 10, testJob("web"))
	mustNoErr(t, s.Write(11, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{testAlloc("a1", job, "n1")}) }))
	got, _ := s.JobByID(nil, "default", "web")
	if got.Status != structs.JobStatusRunning || got.ModifyIndex != 11 || got.JobModifyIndex != 10 {
		t.Fatalf("job = status %q modify %d jobmodify %d", got.Status, got.ModifyIndex, got.JobModifyIndex)
	}
	v, _ := s.JobByIDAndVersion(nil, "default", "web", 0)
	if v.Status != structs.JobStatusRunning {
		t.Fatalf("version row status = %q", v.Status)
	}
}

func TestGarbageCollectingAFinishedJobsHistoryLeavesItDead(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 10, testBatchJob("report"))
	mustNoErr(t, s.Write(11, func(tx *Txn) error { return tx.UpsertEvals([]*structs.Evaluation{testEval("e1", job)}) }))
	a := testAlloc("a1", job, "n1")
	mustNoErr(t, s.Write(12, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a}) }))
	done := a.Copy()
	done.ClientStatus = structs.AllocClientStatusComplete
	mustNoErr(t, s.Write(13, func(tx *Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{done}) }))
	e := testEval("e1", job)
	e.Status = structs.EvalStatusComplete
	mustNoErr(t, s.Write(14, func(tx *Txn) error { return tx.UpsertEvals([]*structs.Evaluation{e}) }))
	if j, _ := s.JobByID(nil, "default", "report"); j.Status != structs.JobStatusDead {
		t.Fatalf("status = %q, want dead", j.Status)
	}
	if it, _ := s.JobsByGC(nil, true); it.Next() == nil {
		t.Fatal("a dead batch job is not in the gc index")
	}
	mustNoErr(t, s.Write(15, func(tx *Txn) error { return tx.DeleteEvals([]string{"e1"}, []string{"a1"}) }))
	if j, _ := s.JobByID(nil, "default", "report"); j.Status != structs.JobStatusDead {
		t.Fatalf("after GC status = %q, want dead", j.Status)
	}
}

func TestJobSummaryCountsAllocsByClientStatus(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 10, testJob("web"))
	e := testEval("e1", job)
	e.Status = structs.EvalStatusComplete
	e.QueuedAllocations = map[string]int{"web": 3}
	mustNoErr(t, s.Write(11, func(tx *Txn) error { return tx.UpsertEvals([]*structs.Evaluation{e}) }))
	want := func(step string, w structs.TaskGroupSummary) {
		t.Helper()
		sum, _ := s.JobSummaryByID(nil, "default", "web")
		if diff := cmp.Diff(w, sum.Summary["web"]); diff != "" {
			t.Fatalf("%s: summary (-want +got):\n%s", step, diff)
		}
	}
	want("queued by the eval", structs.TaskGroupSummary{Queued: 3})

	var allocs []*structs.Allocation
	for _, id := range []string{"a1", "a2"} {
		allocs = append(allocs, testAlloc(id, job, "n1"))
	}
	mustNoErr(t, s.Write(12, func(tx *Txn) error { return tx.UpsertAllocs(allocs) }))
	want("two placed", structs.TaskGroupSummary{Queued: 1, Starting: 2})

	report := func(id, status string) *structs.Allocation {
		a := allocs[0].Copy()
		a.ID, a.ClientStatus = id, status
		return a
	}
	mustNoErr(t, s.Write(13, func(tx *Txn) error {
		return tx.UpdateAllocsFromClient([]*structs.Allocation{report("a1", structs.AllocClientStatusRunning), report("a2", structs.AllocClientStatusRunning)})
	}))
	want("both running", structs.TaskGroupSummary{Queued: 1, Running: 2})
	mustNoErr(t, s.Write(14, func(tx *Txn) error {
		return tx.UpdateAllocsFromClient([]*structs.Allocation{report("a1", structs.AllocClientStatusFailed)})
	}))
	want("one failed", structs.TaskGroupSummary{Queued: 1, Running: 1, Failed: 1})

	unknown := allocs[1].Copy()
	unknown.ClientStatus = structs.AllocClientStatusUnknown
	mustNoErr(t, s.Write(15, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{unknown}) }))
	want("one unknown", structs.TaskGroupSummary{Queued: 1, Unknown: 1, Failed: 1})
	lost := allocs[1].Copy()
	lost.ClientStatus = structs.AllocClientStatusLost
	lost.DesiredStatus = structs.AllocDesiredStatusStop
	mustNoErr(t, s.Write(16, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{lost}) }))
	want("one lost", structs.TaskGroupSummary{Queued: 1, Lost: 1, Failed: 1})

	e2 := testEval("e2", job)
	e2.Status = structs.EvalStatusComplete
	e2.QueuedAllocations = map[string]int{"web": 0}
	mustNoErr(t, s.Write(17, func(tx *Txn) error { return tx.UpsertEvals([]*structs.Evaluation{e2}) }))
	want("the next eval queues nothing", structs.TaskGroupSummary{Lost: 1, Failed: 1})
	if sum, _ := s.JobSummaryByID(nil, "default", "web"); sum.ModifyIndex != 17 {
		t.Fatalf("summary ModifyIndex = %d, want 17", sum.ModifyIndex)
	}
}

func TestPeriodicParentCountsItsChildren(t *testing.T) {
	s := testStateStore(t)
	parent := testBatchJob("cron")
	parent.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "@hourly"}
	mustJob(t, s, 1, parent)
	child := testBatchJob("cron/periodic-1")
	child.ParentID = "cron"
	childJob := mustJob(t, s, 2, child)
	children := func() structs.JobChildrenSummary {
		sum, _ := s.JobSummaryByID(nil, "default", "cron")
		return *sum.Children
	}
	if got := children(); got != (structs.JobChildrenSummary{Pending: 1}) {
		t.Fatalf("after child registered: %+v", got)
	}
	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{testAlloc("a1", childJob, "n1")}) }))
	if got := children(); got != (structs.JobChildrenSummary{Running: 1}) {
		t.Fatalf("after child placed: %+v", got)
	}
	done := testAlloc("a1", childJob, "n1")
	done.ClientStatus = structs.AllocClientStatusComplete
	mustNoErr(t, s.Write(4, func(tx *Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{done}) }))
	if got := children(); got != (structs.JobChildrenSummary{Dead: 1}) {
		t.Fatalf("after child finished: %+v", got)
	}
	mustNoErr(t, s.Write(5, func(tx *Txn) error { return tx.DeleteJob("default", "cron/periodic-1") }))
	if got := children(); got != (structs.JobChildrenSummary{}) {
		t.Fatalf("after child deleted: %+v", got)
	}
}
