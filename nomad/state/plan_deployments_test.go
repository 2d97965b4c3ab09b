package state

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

func TestPlanDeploymentUpdates(t *testing.T) {
	running := func(id string, job *structs.Job) *structs.Deployment {
		return &structs.Deployment{ID: id, Namespace: "default", JobID: job.ID, JobVersion: job.Version,
			JobCreateIndex: job.CreateIndex, Status: structs.DeploymentStatusRunning,
			TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 1}}}
	}
	t.Run("a successful deployment marks its job version stable in the same write", func(t *testing.T) {
		s, job, _ := planFixture(t)
		mustNoErr(t, s.Write(11, func(tx *Txn) error { return tx.UpsertDeployment(running("d1", job)) }))
		mustNoErr(t, s.Write(12, func(tx *Txn) error {
			return tx.UpsertPlanResults(&structs.ApplyPlanResultsRequest{Job: job, DeploymentUpdates: []*structs.DeploymentStatusUpdate{
				{DeploymentID: "d1", Status: structs.DeploymentStatusSuccessful, StatusDescription: "Deployment completed successfully"},
			}})
		}))
		d, _ := s.DeploymentByID(nil, "d1")
		if d.Status != structs.DeploymentStatusSuccessful || d.ModifyIndex != 12 {
			t.Fatalf("deployment = %s @%d", d.Status, d.ModifyIndex)
		}
		cur, _ := s.JobByID(nil, "default", "web")
		v, _ := s.JobByIDAndVersion(nil, "default", "web", job.Version)
		if !cur.Stable || !v.Stable {
			t.Fatalf("stable: job %v version %v", cur.Stable, v.Stable)
		}
	})
	t.Run("a cancelled deployment does not mark its version stable", func(t *testing.T) {
		s, job, _ := planFixture(t)
		mustNoErr(t, s.Write(11, func(tx *Txn) error { return tx.UpsertDeployment(running("d1", job)) }))
		mustNoErr(t, s.Write(12, func(tx *Txn) error {
			return tx.UpsertPlanResults(&structs.ApplyPlanResultsRequest{Job: job, DeploymentUpdates: []*structs.DeploymentStatusUpdate{
				{DeploymentID: "d1", Status: structs.DeploymentStatusCancelled},
			}})
		}))
		if cur, _ := s.JobByID(nil, "default", "web"); cur.Stable {
			t.Fatal("cancelled deployment marked the version stable")
		}
	})
	t.Run("an update of an ended or collected deployment is skipped, the rest of the plan applies", func(t *testing.T) {
		s, job, _ := planFixture(t)
		failed := running("d1", job)
		failed.Status = structs.DeploymentStatusFailed
		mustNoErr(t, s.Write(11, func(tx *Txn) error { return tx.UpsertDeployment(failed) }))
		place := testAlloc("new", job, "n2")
		mustNoErr(t, s.Write(12, func(tx *Txn) error {
			return tx.UpsertPlanResults(&structs.ApplyPlanResultsRequest{Job: job,
				AllocsUpdated: []*structs.Allocation{place},
				DeploymentUpdates: []*structs.DeploymentStatusUpdate{
					{DeploymentID: "d1", Status: structs.DeploymentStatusSuccessful},
					{DeploymentID: "gone", Status: structs.DeploymentStatusCancelled},
				}})
		}))
		d, _ := s.DeploymentByID(nil, "d1")
		if d.Status != structs.DeploymentStatusFailed || d.ModifyIndex != 11 {
			t.Fatalf("ended deployment changed: %s @%d", d.Status, d.ModifyIndex)
		}
		if cur, _ := s.JobByID(nil, "default", "web"); cur.Stable {
			t.Fatal("a failed deployment's version was marked stable")
		}
		if a, _ := s.AllocByID(nil, "new"); a == nil {
			t.Fatal("the plan's placement was not applied")
		}
	})
	t.Run("a new deployment counts its placed allocs and canaries", func(t *testing.T) {
		s, job, _ := planFixture(t)
		a, c := testAlloc("a", job, "n2"), testAlloc("c", job, "n2")
		a.DeploymentID, c.DeploymentID = "d1", "d1"
		c.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
		mustNoErr(t, s.Write(12, func(tx *Txn) error {
			return tx.UpsertPlanResults(&structs.ApplyPlanResultsRequest{Job: job,
				Deployment: running("d1", job), AllocsUpdated: []*structs.Allocation{a, c}})
		}))
		d, _ := s.DeploymentByID(nil, "d1")
		st := d.TaskGroups["web"]
		if st.PlacedAllocs != 2 || len(st.PlacedCanaries) != 1 || st.PlacedCanaries[0] != "c" || d.CreateIndex != 12 {
			t.Fatalf("deployment state = %+v", st)
		}
		if got, _ := s.AllocByID(nil, "c"); got.DeploymentStatus == nil || !got.DeploymentStatus.Canary {
			t.Fatalf("canary flag lost: %+v", got.DeploymentStatus)
		}
	})
}
