package planner_test

import (
	"testing"

	"github.com/drover-sched/drover/nomad/planner"
	"github.com/drover-sched/drover/structs"
)

// A scheduler's deployment and its status changes travel in the plan's raft
// entry: a new deployment with the allocs it counts, and a plan that only
// completes (or cancels) a deployment still gets an entry.
func TestPlanApply_DeploymentAndItsUpdatesAreCommitted(t *testing.T) {
	h := newPlanHarness(t)
	h.start(planner.Config{}, false)
	job := h.job()
	n := h.node(nil)

	place, canary := testAllocOn(job, n, 100, 64), testAllocOn(job, n, 100, 64)
	place.DeploymentID, canary.DeploymentID = "d1", "d1"
	canary.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
	p := testPlan(job, place, canary)
	p.Deployment = &structs.Deployment{ID: "d1", Namespace: job.Namespace, JobID: job.ID, JobVersion: job.Version,
		JobCreateIndex: job.CreateIndex, Status: structs.DeploymentStatusRunning,
		TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 2, DesiredCanaries: 1}}}
	res := h.mustSubmit(p)
	if res.Deployment == nil || res.Deployment.ID != "d1" {
		t.Fatalf("result deployment = %+v", res.Deployment)
	}
	d, _ := h.store.DeploymentByID(nil, "d1")
	if d == nil || d.TaskGroups["web"].PlacedAllocs != 2 || len(d.TaskGroups["web"].PlacedCanaries) != 1 ||
		d.TaskGroups["web"].PlacedCanaries[0] != canary.ID {
		t.Fatalf("stored deployment = %+v", d)
	}

	entries := h.raft.EntryCount()
	done := testPlan(job)
	done.DeploymentUpdates = []*structs.DeploymentStatusUpdate{{DeploymentID: "d1", Status: structs.DeploymentStatusSuccessful,
		StatusDescription: "Deployment completed successfully"}}
	res = h.mustSubmit(done)
	if len(res.DeploymentUpdates) != 1 || h.raft.EntryCount() != entries+1 {
		t.Fatalf("updates-only plan: result %+v, entries %d -> %d", res.DeploymentUpdates, entries, h.raft.EntryCount())
	}
	d, _ = h.store.DeploymentByID(nil, "d1")
	if d.Status != structs.DeploymentStatusSuccessful {
		t.Fatalf("deployment status = %s", d.Status)
	}
	if j, _ := h.store.JobByID(nil, job.Namespace, job.ID); !j.Stable {
		t.Fatal("the completed version is not stable")
	}
}
