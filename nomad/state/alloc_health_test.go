package state

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// A client's health verdict is for the deployment (or migration) it was
// made in: a plan that moves the alloc into a new deployment does not
// carry it over, so the new deployment does not count the alloc healthy
// before its client has judged it there. Within one deployment the
// verdict is kept, whatever the plan's copy says.
func TestHealthVerdictDoesNotFollowTheAllocIntoANewDeployment(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 1, testJob("web"))
	d := &structs.Deployment{ID: "d1", Namespace: "default", JobID: "web", JobCreateIndex: 1, Status: structs.DeploymentStatusRunning,
		TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 1}}}
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertDeployment(d) }))
	a := testAlloc("a1", job, "n1")
	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a}) }))

	// The client judged it healthy as a migration (no deployment).
	report := a.Copy()
	report.ClientStatus = structs.AllocClientStatusRunning
	report.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: structs.BoolPtr(true), Timestamp: time.Unix(100, 0)}
	mustNoErr(t, s.Write(4, func(tx *Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{report}) }))

	// A plan that changes a server field keeps the verdict.
	same := a.Copy()
	same.DesiredDescription = "still here"
	same.DeploymentStatus = nil
	mustNoErr(t, s.Write(5, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{same}) }))
	if got, _ := s.AllocByID(nil, "a1"); got.DeploymentStatus == nil || got.DeploymentStatus.Healthy == nil || !*got.DeploymentStatus.Healthy {
		t.Fatalf("verdict lost within the same deployment: %+v", got.DeploymentStatus)
	}

	// An in-place update into d1 does not bring the verdict along.
	moved := a.Copy()
	moved.DeploymentID = "d1"
	moved.DeploymentStatus = nil
	mustNoErr(t, s.Write(6, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{moved}) }))
	got, _ := s.AllocByID(nil, "a1")
	if got.DeploymentStatus != nil && got.DeploymentStatus.Healthy != nil {
		t.Fatalf("the migration's verdict followed the alloc into d1: %+v", got.DeploymentStatus)
	}
	dep, _ := s.DeploymentByID(nil, "d1")
	if st := dep.TaskGroups["web"]; st.PlacedAllocs != 1 || st.HealthyAllocs != 0 {
		t.Fatalf("d1 counts %+v: want the alloc placed, not yet healthy", st)
	}
}
