package state

import (
	"errors"
	"testing"

	"github.com/drover-sched/drover/structs"
)

func TestDeploymentsByJob(t *testing.T) {
	s := testStateStore(t)
	old := mustJob(t, s, 1, testJob("web"))
	mustNoErr(t, s.Write(2, func(tx *Txn) error {
		return tx.UpsertDeployment(&structs.Deployment{ID: "d-old", Namespace: "default", JobID: "web", JobCreateIndex: old.CreateIndex})
	}))
	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.DeleteJob("default", "web") }))
	cur := mustJob(t, s, 4, testJob("web"))
	mustNoErr(t, s.Write(5, func(tx *Txn) error {
		return tx.UpsertDeployment(&structs.Deployment{ID: "d1", Namespace: "default", JobID: "web", JobCreateIndex: cur.CreateIndex})
	}))
	mustNoErr(t, s.Write(6, func(tx *Txn) error {
		return tx.UpsertDeployment(&structs.Deployment{ID: "d2", Namespace: "default", JobID: "web", JobCreateIndex: cur.CreateIndex})
	}))
	mustNoErr(t, s.Write(7, func(tx *Txn) error {
		return tx.UpsertDeployment(&structs.Deployment{ID: "d3", Namespace: "default", JobID: "web-2"})
	}))

	depIDs := func(ds []*structs.Deployment) string {
		return fmtSet(ids(ds, func(d *structs.Deployment) string { return d.ID }))
	}
	all, _ := s.DeploymentsByJobID(nil, "default", "web", true)
	if got := depIDs(all); got != "[d-old d1 d2]" {
		t.Fatalf("all = %s", got)
	}
	current, _ := s.DeploymentsByJobID(nil, "default", "web", false)
	if got := depIDs(current); got != "[d1 d2]" {
		t.Fatalf("current incarnation = %s", got)
	}
	latest, _ := s.LatestDeploymentByJobID(nil, "default", "web")
	if latest == nil || latest.ID != "d2" {
		t.Fatalf("latest = %+v", latest)
	}
	// An update keeps CreateIndex, so "latest" stays the newest created.
	mustNoErr(t, s.Write(8, func(tx *Txn) error {
		return tx.UpsertDeployment(&structs.Deployment{ID: "d1", Namespace: "default", JobID: "web", JobCreateIndex: cur.CreateIndex})
	}))
	if latest, _ := s.LatestDeploymentByJobID(nil, "default", "web"); latest.ID != "d2" {
		t.Fatalf("latest after updating d1 = %s", latest.ID)
	}
	mustNoErr(t, s.Write(9, func(tx *Txn) error { return tx.DeleteDeployment([]string{"d1", "unknown"}) }))
	if d, _ := s.DeploymentByID(nil, "d1"); d != nil {
		t.Fatal("d1 not deleted")
	}
}

func TestUpdateDeploymentStatusWithJobAndEval(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 1, testJob("web"))
	mustNoErr(t, s.Write(2, func(tx *Txn) error {
		return tx.UpsertDeployment(&structs.Deployment{ID: "d1", Namespace: "default", JobID: "web", Status: structs.DeploymentStatusRunning})
	}))
	revert := testJob("web")
	revert.Priority = 80
	req := &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "d1", Status: structs.DeploymentStatusFailed, StatusDescription: "unhealthy"},
		Job:              revert,
		Eval:             testEval("e1", job),
	}
	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.UpdateDeploymentStatus(req) }))
	d, _ := s.DeploymentByID(nil, "d1")
	if d.Status != structs.DeploymentStatusFailed || d.StatusDescription != "unhealthy" || d.ModifyIndex != 3 || d.CreateIndex != 2 {
		t.Fatalf("deployment = %+v", d)
	}
	if j, _ := s.JobByID(nil, "default", "web"); j.Version != 1 || j.Priority != 80 {
		t.Fatalf("job = version %d priority %d", j.Version, j.Priority)
	}
	if e, _ := s.EvalByID(nil, "e1"); e == nil {
		t.Fatal("eval missing")
	}
	err := s.Write(4, func(tx *Txn) error {
		return tx.UpdateDeploymentStatus(&structs.DeploymentStatusUpdateRequest{
			DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "nope"}, Eval: testEval("e2", job)})
	})

	if !errors.Is(err, structs.ErrNotFound) {
		t.Fatalf("unknown deployment: %v", err)
	}
	if e, _ := s.EvalByID(nil, "e2"); e != nil {
		t.Fatal("eval of a refused update applied")
	}
}
