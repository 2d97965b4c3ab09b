package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// plantDeployment writes, as the scheduler's plan would, a running
// deployment of job's current version that adopts the job's allocs, the
// first canaries of them as canaries. The test then drives it through the
// HTTP API alone.
func plantDeployment(t *testing.T, a *TestAgent, jobID string, canaries int) (string, []string) {
	t.Helper()
	ns, ok := a.Agent.server.(nomadServer)
	if !ok {
		t.Fatalf("the agent's server is a %T", a.Agent.server)
	}
	srv := ns.Server
	st := srv.State()
	job, err := st.JobByID(nil, structs.DefaultNamespace, jobID)
	if err != nil || job == nil {
		t.Fatalf("job %s: %v", jobID, err)
	}
	allocs, err := st.AllocsByJob(nil, structs.DefaultNamespace, jobID, false)
	if err != nil {
		t.Fatal(err)
	}
	id := structs.GenerateUUID()
	var adopted []*structs.Allocation
	var ids []string
	for i, al := range allocs {
		c := al.Copy()
		c.DeploymentID = id
		if i < canaries {
			c.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
		}
		adopted = append(adopted, c)
		ids = append(ids, c.ID)
	}
	f, err := srv.RaftApplyPlan(&structs.ApplyPlanResultsRequest{
		AllocsUpdated: adopted, Job: job, UpdatedAt: time.Now().UnixNano(),
		Deployment: &structs.Deployment{ID: id, Namespace: structs.DefaultNamespace, JobID: jobID,
			JobVersion: job.Version, JobCreateIndex: job.CreateIndex, Status: structs.DeploymentStatusRunning,
			StatusDescription: structs.DeploymentStatusDescriptionRunningNeedsPromotion,
			TaskGroups:        map[string]*structs.DeploymentState{"web": {DesiredTotal: len(allocs), DesiredCanaries: canaries}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Error(); err != nil {
		t.Fatal(err)
	}
	return id, ids
}

// wantAPIError checks that a Nomad client call failed with a 400 whose
// text says what.
func wantAPIError(t *testing.T, what string, err error, says string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), says) {
		t.Fatalf("%s: err = %v, want a 400 saying %q", what, err, says)
	}
}

func TestNomadClientDrivesADeployment(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, nil)
	c := nomadClient(t, a)
	registerJob(t, a, mockJob("dep", 3))
	waitUntil(t, "three allocs running", func() bool {
		allocs, _, err := c.Jobs().Allocations("dep", false, nil)
		running := 0
		for _, al := range allocs {
			if al.ClientStatus == "running" {
				running++
			}
		}
		return err == nil && running == 3
	})
	depID, allocIDs := plantDeployment(t, a, "dep", 1)
	deps := c.Deployments()

	// Reads: the list (and by prefix), one, its allocs, the job's.
	list, _, err := deps.PrefixList(depID[:8])
	if err != nil || len(list) != 1 || list[0].ID != depID {
		t.Fatalf("prefix list: %v %+v", err, list)
	}
	d, _, err := deps.Info(depID, nil)
	if err != nil || d.JobID != "dep" || d.Status != "running" || d.TaskGroups["web"].DesiredCanaries != 1 ||
		d.TaskGroups["web"].PlacedCanaries[0] != allocIDs[0] || d.CreateTime == 0 || d.ModifyTime == 0 {
		t.Fatalf("info: %v %+v", err, d)
	}
	stubs, _, err := deps.Allocations(depID, nil)
	if err != nil || len(stubs) != 3 {
		t.Fatalf("allocations: %v %d", err, len(stubs))
	}
	latest, _, err := c.Jobs().LatestDeployment("dep", nil)
	if err != nil || latest == nil || latest.ID != depID {
		t.Fatalf("latest: %v %+v", err, latest)
	}
	if _, _, err := deps.Allocations("00000000-0000-0000-0000-000000000000", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("allocations of an unknown deployment: err = %v, want a 404", err)
	}

	// Promotion waits for a healthy canary; a group must exist.
	_, _, err = deps.PromoteAll(depID, nil)
	wantAPIError(t, "promote before the canary is healthy", err, `"web" has 0/1 healthy canaries`)
	up, _, err := deps.SetAllocHealth(depID, allocIDs[:1], nil, nil)
	if err != nil || up.EvalID == "" || up.DeploymentModifyIndex == 0 {
		t.Fatalf("set health: %v %+v", err, up)
	}
	_, _, err = deps.SetAllocHealth(depID, []string{"no-such-alloc"}, nil, nil)
	wantAPIError(t, "health of an unknown alloc", err, "allocation no-such-alloc does not exist")
	_, _, err = deps.PromoteGroups(depID, []string{"api"}, nil)
	wantAPIError(t, "promote an unknown group", err, `"api", which is not a task group`)
	if up, _, err = deps.PromoteGroups(depID, []string{"web"}, nil); err != nil || up.EvalID == "" {
		t.Fatalf("promote: %v %+v", err, up)
	}
	d, _, _ = deps.Info(depID, nil)
	if !d.TaskGroups["web"].Promoted || d.TaskGroups["web"].HealthyAllocs != 1 || d.StatusDescription != "Deployment is running" {
		t.Fatalf("after promotion: %+v %+v", d, d.TaskGroups["web"])
	}

	// Pause and resume.
	if _, _, err = deps.Pause(depID, true, nil); err != nil {
		t.Fatal(err)
	}
	if d, _, _ = deps.Info(depID, nil); d.Status != "paused" || d.StatusDescription != "Deployment is paused" {
		t.Fatalf("after pause: %s %q", d.Status, d.StatusDescription)
	}
	_, _, err = deps.Pause(depID, true, nil)
	wantAPIError(t, "pause twice", err, "only a running deployment can be paused")
	if up, _, err = deps.Pause(depID, false, nil); err != nil || up.EvalID == "" {
		t.Fatalf("resume: %v %+v", err, up)
	}
	_, _, err = deps.Unblock(depID, nil)
	wantAPIError(t, "unblock a running deployment", err, "only a blocked deployment can be unblocked")

	// Fail: the end.
	if up, _, err = deps.Fail(depID, nil); err != nil || up.EvalID == "" || up.RevertedJobVersion != nil {
		t.Fatalf("fail: %v %+v", err, up)
	}
	if d, _, _ = deps.Info(depID, nil); d.Status != "failed" || d.StatusDescription != "Deployment marked as failed" {
		t.Fatalf("after fail: %s %q", d.Status, d.StatusDescription)
	}
	_, _, err = deps.Fail(depID, nil)
	wantAPIError(t, "fail twice", err, "can no longer change")
}

func TestNomadClientSeesRefusedDeploymentWritesChangeNothing(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, nil)
	c := nomadClient(t, a)
	registerJob(t, a, mockJob("dep", 2))
	waitUntil(t, "two allocs", func() bool {
		allocs, _, err := c.Jobs().Allocations("dep", false, nil)
		return err == nil && len(allocs) == 2
	})
	depID, allocIDs := plantDeployment(t, a, "dep", 0)
	before, _, err := c.Deployments().Info(depID, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Deployments().SetAllocHealth(depID, allocIDs, allocIDs[:1], nil)
	wantAPIError(t, "an alloc named healthy and unhealthy", err, "named more than once")
	after, _, _ := c.Deployments().Info(depID, nil)
	if after.ModifyIndex != before.ModifyIndex || after.TaskGroups["web"].HealthyAllocs != 0 {
		t.Fatalf("a refused request changed the deployment: %+v", after.TaskGroups["web"])
	}
	// An unhealthy verdict fails the deployment in the same write.
	if _, _, err := c.Deployments().SetAllocHealth(depID, nil, allocIDs[:1], nil); err != nil {
		t.Fatal(err)
	}
	if d, _, _ := c.Deployments().Info(depID, nil); d.Status != "failed" || d.StatusDescription != "Failed due to unhealthy allocations" {
		t.Fatalf("after an unhealthy verdict: %s %q", d.Status, d.StatusDescription)
	}
}
