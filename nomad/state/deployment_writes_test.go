package state

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

var depT0 = time.Unix(1700000000, 0).UTC()

// deployedJob stores job web (version 0), a running deployment d1 for it
// with the given canaries wanted, and allocs placed by a plan at depT0:
// canaries first, then plain ones, n in all.
func deployedJob(t *testing.T, s *StateStore, n, canaries int) (*structs.Job, []*structs.Allocation) {
	t.Helper()
	job := mustJob(t, s, 1, testJob("web"))
	var allocs []*structs.Allocation
	for i := 0; i < n; i++ {
		a := testAlloc("a"+string(rune('0'+i)), job, "n1")
		a.Name = structs.AllocName(job.ID, "web", i)
		a.DeploymentID = "d1"
		if i < canaries {
			a.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
		}
		allocs = append(allocs, a)
	}
	mustNoErr(t, s.Write(2, func(tx *Txn) error {
		return tx.UpsertPlanResults(&structs.ApplyPlanResultsRequest{
			AllocsUpdated: allocs, Job: job, UpdatedAt: depT0.UnixNano(),
			Deployment: &structs.Deployment{ID: "d1", Namespace: "default", JobID: "web", JobVersion: job.Version,
				Status: structs.DeploymentStatusRunning, TaskGroups: map[string]*structs.DeploymentState{
					"web": {DesiredTotal: n, DesiredCanaries: canaries, ProgressDeadline: 10 * time.Minute}}},
		})
	}))
	return job, allocs
}

func TestADeploymentTakesItsTimesFromTheRaftEntry(t *testing.T) {
	s := testStateStore(t)
	deployedJob(t, s, 1, 0)
	d, _ := s.DeploymentByID(nil, "d1")
	if d.CreateTime != depT0.UnixNano() || d.ModifyTime != depT0.UnixNano() {
		t.Fatalf("times after the plan = %d/%d, want both %d", d.CreateTime, d.ModifyTime, depT0.UnixNano())
	}
	later := depT0.Add(time.Minute).UnixNano()
	mustNoErr(t, s.Write(3, func(tx *Txn) error {
		return tx.UpdateDeploymentStatus(&structs.DeploymentStatusUpdateRequest{UpdatedAt: later,
			DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "d1", Status: structs.DeploymentStatusPaused}})
	}))
	d, _ = s.DeploymentByID(nil, "d1")
	if d.CreateTime != depT0.UnixNano() || d.ModifyTime != later {
		t.Fatalf("times after pausing = %d/%d, want %d/%d", d.CreateTime, d.ModifyTime, depT0.UnixNano(), later)
	}
}

func TestASuccessfulDeploymentMarksItsJobVersionStable(t *testing.T) {
	s := testStateStore(t)
	deployedJob(t, s, 1, 0)
	mustNoErr(t, s.Write(3, func(tx *Txn) error {
		return tx.UpsertPlanResults(&structs.ApplyPlanResultsRequest{UpdatedAt: depT0.UnixNano(),
			DeploymentUpdates: []*structs.DeploymentStatusUpdate{{DeploymentID: "d1", Status: structs.DeploymentStatusSuccessful,
				StatusDescription: structs.DeploymentStatusDescriptionSuccessful}}})
	}))
	job, _ := s.JobByID(nil, "default", "web")
	v0, _ := s.JobByIDAndVersion(nil, "default", "web", 0)
	if !job.Stable || !v0.Stable {
		t.Fatalf("job stable %t, version 0 stable %t; want both true", job.Stable, v0.Stable)
	}
}

func TestAFailedDeploymentLeavesItsJobVersionUnstable(t *testing.T) {
	s := testStateStore(t)
	deployedJob(t, s, 1, 0)
	mustNoErr(t, s.Write(3, func(tx *Txn) error {
		return tx.UpdateDeploymentStatus(&structs.DeploymentStatusUpdateRequest{
			DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "d1", Status: structs.DeploymentStatusFailed}})
	}))
	if job, _ := s.JobByID(nil, "default", "web"); job.Stable {
		t.Fatal("a failed deployment marked its job stable")
	}
}

func TestManualHealthMovesTheCountsAndTheProgressDeadline(t *testing.T) {
	s := testStateStore(t)
	deployedJob(t, s, 3, 0)
	at := depT0.Add(2 * time.Minute)
	mustNoErr(t, s.Write(3, func(tx *Txn) error {
		return tx.UpdateDeploymentAllocHealth(&structs.ApplyDeploymentAllocHealthRequest{
			DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: "d1",
				HealthyAllocationIDs: []string{"a0", "a1"}, UnhealthyAllocationIDs: []string{"a2"}},
			Timestamp: at.UnixNano()})
	}))
	d, _ := s.DeploymentByID(nil, "d1")
	st := d.TaskGroups["web"]
	if st.HealthyAllocs != 2 || st.UnhealthyAllocs != 1 {
		t.Fatalf("healthy/unhealthy = %d/%d, want 2/1", st.HealthyAllocs, st.UnhealthyAllocs)
	}
	if want := at.Add(10 * time.Minute); !st.RequireProgressBy.Equal(want) {
		t.Fatalf("RequireProgressBy = %v, want %v (progress deadline after the health time)", st.RequireProgressBy, want)
	}
	if d.ModifyTime != at.UnixNano() {
		t.Fatalf("ModifyTime = %d, want %d", d.ModifyTime, at.UnixNano())
	}
	a2, _ := s.AllocByID(nil, "a2")
	if a2.DeploymentStatus == nil || a2.DeploymentStatus.Healthy == nil || *a2.DeploymentStatus.Healthy || !a2.DeploymentStatus.Timestamp.Equal(at) {
		t.Fatalf("a2 deployment status = %+v", a2.DeploymentStatus)
	}
	// Turning a2 healthy moves it from one count to the other.
	mustNoErr(t, s.Write(4, func(tx *Txn) error {
		return tx.UpdateDeploymentAllocHealth(&structs.ApplyDeploymentAllocHealthRequest{
			DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: "d1", HealthyAllocationIDs: []string{"a2"}},
			Timestamp:                    at.UnixNano()})
	}))
	d, _ = s.DeploymentByID(nil, "d1")
	if st := d.TaskGroups["web"]; st.HealthyAllocs != 3 || st.UnhealthyAllocs != 0 {
		t.Fatalf("healthy/unhealthy = %d/%d, want 3/0", st.HealthyAllocs, st.UnhealthyAllocs)
	}
}

func TestARefusedHealthRequestChangesNothing(t *testing.T) {
	cases := []struct {
		name string
		req  structs.DeploymentAllocHealthRequest
		want string
	}{
		{"an unknown alloc", structs.DeploymentAllocHealthRequest{DeploymentID: "d1", HealthyAllocationIDs: []string{"a0", "nope"}}, "allocation nope does not exist"},
		{"an alloc named twice", structs.DeploymentAllocHealthRequest{DeploymentID: "d1", HealthyAllocationIDs: []string{"a0"}, UnhealthyAllocationIDs: []string{"a0"}}, "named more than once"},
		{"no allocs at all", structs.DeploymentAllocHealthRequest{DeploymentID: "d1"}, "both empty"},
		{"an alloc of another deployment", structs.DeploymentAllocHealthRequest{DeploymentID: "d1", HealthyAllocationIDs: []string{"other"}}, "not part of deployment"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := testStateStore(t)
			job, _ := deployedJob(t, s, 2, 0)
			mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{testAlloc("other", job, "n1")}) }))
			before, _ := s.DeploymentByID(nil, "d1")
			err := s.Write(4, func(tx *Txn) error {
				return tx.UpdateDeploymentAllocHealth(&structs.ApplyDeploymentAllocHealthRequest{DeploymentAllocHealthRequest: c.req, Timestamp: 1})
			})
			if !errors.Is(err, ErrDeploymentRequest) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrDeploymentRequest saying %q", err, c.want)
			}
			after, _ := s.DeploymentByID(nil, "d1")
			a0, _ := s.AllocByID(nil, "a0")
			if after.ModifyIndex != before.ModifyIndex || a0.DeploymentStatus != nil {
				t.Fatalf("a refused request changed state: deployment index %d -> %d, a0 status %+v", before.ModifyIndex, after.ModifyIndex, a0.DeploymentStatus)
			}
		})
	}
}

func TestPromotionNeedsEveryCanaryHealthy(t *testing.T) {
	s := testStateStore(t)
	job, _ := deployedJob(t, s, 3, 2)
	promote := &structs.DeploymentPromoteRequest{DeploymentID: "d1", All: true, Eval: testEval("e1", job), UpdatedAt: depT0.UnixNano()}
	mustNoErr(t, s.Write(3, func(tx *Txn) error {
		return tx.UpdateDeploymentAllocHealth(&structs.ApplyDeploymentAllocHealthRequest{
			DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: "d1", HealthyAllocationIDs: []string{"a0"}},
			Timestamp:                    depT0.UnixNano()})
	}))
	err := s.Write(4, func(tx *Txn) error { return tx.UpdateDeploymentPromotion(promote) })
	if !errors.Is(err, ErrDeploymentRequest) || !strings.Contains(err.Error(), `"web" has 1/2 healthy canaries`) {
		t.Fatalf("promoting with one canary healthy: err = %v", err)
	}
	if e, _ := s.EvalByID(nil, "e1"); e != nil {
		t.Fatal("a refused promotion stored its eval")
	}
	mustNoErr(t, s.Write(5, func(tx *Txn) error {
		return tx.UpdateDeploymentAllocHealth(&structs.ApplyDeploymentAllocHealthRequest{
			DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: "d1", HealthyAllocationIDs: []string{"a1"}},
			Timestamp:                    depT0.UnixNano()})
	}))
	mustNoErr(t, s.Write(6, func(tx *Txn) error { return tx.UpdateDeploymentPromotion(promote) }))
	d, _ := s.DeploymentByID(nil, "d1")
	if !d.TaskGroups["web"].Promoted {
		t.Fatal("group not promoted")
	}
	for _, id := range []string{"a0", "a1"} {
		if a, _ := s.AllocByID(nil, id); a.DeploymentStatus.Canary {
			t.Fatalf("%s is still a canary after promotion", id)
		}
	}
	if e, _ := s.EvalByID(nil, "e1"); e == nil {
		t.Fatal("promotion did not store its eval")
	}
	if err := s.Write(7, func(tx *Txn) error { return tx.UpdateDeploymentPromotion(promote) }); !errors.Is(err, ErrDeploymentRequest) {
		t.Fatalf("promoting twice: err = %v, want nothing waiting for promotion", err)
	}
}

func TestPromotionNamesAGroupThatIsNotThere(t *testing.T) {
	s := testStateStore(t)
	deployedJob(t, s, 2, 1)
	err := s.Write(3, func(tx *Txn) error {
		return tx.UpdateDeploymentPromotion(&structs.DeploymentPromoteRequest{DeploymentID: "d1", Groups: []string{"api"}})
	})
	if !errors.Is(err, ErrDeploymentRequest) || !strings.Contains(err.Error(), `"api", which is not a task group`) {
		t.Fatalf("err = %v", err)
	}
	mustNoErr(t, s.Write(4, func(tx *Txn) error {
		return tx.UpdateDeploymentStatus(&structs.DeploymentStatusUpdateRequest{
			DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "d1", Status: structs.DeploymentStatusFailed}})
	}))
	err = s.Write(5, func(tx *Txn) error {
		return tx.UpdateDeploymentPromotion(&structs.DeploymentPromoteRequest{DeploymentID: "d1", All: true})
	})
	if !errors.Is(err, ErrDeploymentRequest) || !strings.Contains(err.Error(), "it is failed") {
		t.Fatalf("promoting a failed deployment: err = %v", err)
	}
}

func TestANewDeploymentStartsItsProgressDeadlinesAtTheEntrysTime(t *testing.T) {
	s := testStateStore(t)
	deployedJob(t, s, 1, 0)
	d, _ := s.DeploymentByID(nil, "d1")
	if want := depT0.Add(10 * time.Minute); !d.TaskGroups["web"].RequireProgressBy.Equal(want) {
		t.Fatalf("RequireProgressBy = %v, want %v", d.TaskGroups["web"].RequireProgressBy, want)
	}
}

func TestAStatusChangeDecidedOnAStaleSnapshotLeavesAnEndedDeploymentAlone(t *testing.T) {
	s := testStateStore(t)
	job, _ := deployedJob(t, s, 1, 0)
	mustNoErr(t, s.Write(3, func(tx *Txn) error {
		return tx.UpsertPlanResults(&structs.ApplyPlanResultsRequest{UpdatedAt: depT0.UnixNano(),
			DeploymentUpdates: []*structs.DeploymentStatusUpdate{{DeploymentID: "d1", Status: structs.DeploymentStatusSuccessful}}})
	}))
	revert := job.Copy()
	revert.Priority = 90
	err := s.Write(4, func(tx *Txn) error {
		return tx.UpdateDeploymentStatus(&structs.DeploymentStatusUpdateRequest{
			DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "d1", Status: structs.DeploymentStatusFailed},
			Job:              revert, Eval: testEval("e1", job)})
	})

	if !errors.Is(err, ErrDeploymentRequest) || !strings.Contains(err.Error(), "it is successful") {
		t.Fatalf("err = %v", err)
	}
	d, _ := s.DeploymentByID(nil, "d1")
	cur, _ := s.JobByID(nil, "default", "web")
	if d.Status != structs.DeploymentStatusSuccessful || cur.Priority == 90 {
		t.Fatalf("a stale failure changed state: deployment %s, job priority %d", d.Status, cur.Priority)
	}
}
