package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/api"
)

// manualJob is a service job whose allocs' health is set by hand
// (health_check = "manual"), so the test, not the client, decides when
// each turns healthy. version changes the task, so each new version is a
// destructive update.
func manualJob(count, canary int, version string) *api.Job {
	j := mockJob("dep", count)
	j.TaskGroups[0].Tasks[0].Config["stdout_string"] = version
	j.TaskGroups[0].Update = &api.UpdateStrategy{
		MaxParallel: ptr(1), HealthCheck: ptr("manual"), Canary: ptr(canary),
		MinHealthyTime: ptr(time.Duration(0)), HealthyDeadline: ptr(time.Minute), ProgressDeadline: ptr(10 * time.Minute),
		AutoRevert: ptr(false),
	}
	return j
}

// deploymentOf waits for the job's deployment of version to have placed
// placed allocs, and returns it with their IDs.
func deploymentOf(t *testing.T, c *nomadapi.Client, version uint64, placed int) (*nomadapi.Deployment, []string) {
	t.Helper()
	var d *nomadapi.Deployment
	var ids []string
	waitUntil(t, fmt.Sprintf("a deployment of version %d with %d allocs", version, placed), func() bool {
		latest, _, err := c.Jobs().LatestDeployment("dep", nil)
		if err != nil || latest == nil || latest.JobVersion != version {
			return false
		}
		stubs, _, err := c.Deployments().Allocations(latest.ID, nil)
		if err != nil || len(stubs) != placed {
			return false
		}
		d, ids = latest, nil
		for _, s := range stubs {
			ids = append(ids, s.ID)
		}
		return true
	})
	return d, ids
}

// wantAPIError checks that a Nomad client call failed with a 400 whose
// text says what.
func wantAPIError(t *testing.T, what string, err error, says string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), says) {
		t.Fatalf("%s: err = %v, want a 400 saying %q", what, err, says)
	}
}

func waitStatus(t *testing.T, c *nomadapi.Client, id, status string) *nomadapi.Deployment {
	t.Helper()
	var d *nomadapi.Deployment
	waitUntil(t, "deployment "+status, func() bool {
		var err error
		d, _, err = c.Deployments().Info(id, nil)
		return err == nil && d.Status == status
	})
	return d
}

// Nomad's own Go client drives a canary deployment the scheduler made:
// reads, health by hand, promotion (refused while the canary is not
// healthy), pause and resume, and a manual failure.
func TestNomadClientDrivesADeployment(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, nil)
	c := nomadClient(t, a)
	deps := c.Deployments()

	registerJob(t, a, manualJob(3, 0, "v1"))
	first, ids := deploymentOf(t, c, 0, 3)
	if _, _, err := deps.SetAllocHealth(first.ID, ids, nil, nil); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, first.ID, "successful")
	if job, _, err := c.Jobs().Info("dep", nil); err != nil || job.Stable == nil || !*job.Stable {
		t.Fatalf("after a successful deployment the job is not stable: %v", err)
	}

	registerJob(t, a, manualJob(3, 1, "v2"))
	d, canaries := deploymentOf(t, c, 1, 1)

	// Reads: the list by prefix, one, its allocs, the job's latest.
	list, _, err := deps.PrefixList(d.ID[:8])
	if err != nil || len(list) != 1 || list[0].ID != d.ID {
		t.Fatalf("prefix list: %v %+v", err, list)
	}
	if st := d.TaskGroups["web"]; d.Status != "running" || st.DesiredCanaries != 1 || len(st.PlacedCanaries) != 1 ||
		st.PlacedCanaries[0] != canaries[0] || d.CreateTime == 0 || d.ModifyTime == 0 || st.RequireProgressBy.IsZero() {
		t.Fatalf("canary deployment: %+v %+v", d, st)
	}
	if _, _, err := deps.Allocations("00000000-0000-0000-0000-000000000000", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("allocations of an unknown deployment: err = %v, want a 404", err)
	}

	// Promotion waits for a healthy canary; a group must exist.
	_, _, err = deps.PromoteAll(d.ID, nil)
	wantAPIError(t, "promote before the canary is healthy", err, `"web" has 0/1 healthy canaries`)
	_, _, err = deps.SetAllocHealth(d.ID, []string{"no-such-alloc"}, nil, nil)
	wantAPIError(t, "health of an unknown alloc", err, "allocation no-such-alloc does not exist")
	_, _, err = deps.SetAllocHealth(d.ID, ids[:1], nil, nil)
	wantAPIError(t, "health of an alloc of the earlier deployment", err, "is not part of deployment")
	up, _, err := deps.SetAllocHealth(d.ID, canaries, nil, nil)
	if err != nil || up.EvalID == "" || up.DeploymentModifyIndex == 0 {
		t.Fatalf("set health: %v %+v", err, up)
	}
	_, _, err = deps.PromoteGroups(d.ID, []string{"api"}, nil)
	wantAPIError(t, "promote an unknown group", err, `"api", which is not a task group`)

	// Pause and resume, before promoting.
	if _, _, err = deps.Pause(d.ID, true, nil); err != nil {
		t.Fatal(err)
	}
	if p := waitStatus(t, c, d.ID, "paused"); p.StatusDescription != "Deployment is paused" {
		t.Fatalf("after pause: %q", p.StatusDescription)
	}
	_, _, err = deps.Pause(d.ID, true, nil)
	wantAPIError(t, "pause twice", err, "only a running deployment can be paused")
	if up, _, err = deps.Pause(d.ID, false, nil); err != nil || up.EvalID == "" {
		t.Fatalf("resume: %v %+v", err, up)
	}
	_, _, err = deps.Unblock(d.ID, nil)
	wantAPIError(t, "unblock a running deployment", err, "only a blocked deployment can be unblocked")

	if up, _, err = deps.PromoteGroups(d.ID, []string{"web"}, nil); err != nil || up.EvalID == "" {
		t.Fatalf("promote: %v %+v", err, up)
	}
	if d, _, _ = deps.Info(d.ID, nil); !d.TaskGroups["web"].Promoted {
		t.Fatalf("after promotion: %+v", d.TaskGroups["web"])
	}

	// Fail: the end.
	if up, _, err = deps.Fail(d.ID, nil); err != nil || up.EvalID == "" || up.RevertedJobVersion != nil {
		t.Fatalf("fail: %v %+v", err, up)
	}
	if f := waitStatus(t, c, d.ID, "failed"); f.StatusDescription != "Deployment marked as failed" {
		t.Fatalf("after fail: %q", f.StatusDescription)
	}
	_, _, err = deps.Fail(d.ID, nil)
	wantAPIError(t, "fail twice", err, "can no longer change")
}

func TestNomadClientSeesRefusedDeploymentWritesChangeNothing(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, nil)
	c := nomadClient(t, a)
	registerJob(t, a, manualJob(2, 0, "v1"))
	d, ids := deploymentOf(t, c, 0, 2)
	_, _, err := c.Deployments().SetAllocHealth(d.ID, ids, ids[:1], nil)
	wantAPIError(t, "an alloc named healthy and unhealthy", err, "named more than once")
	after, _, _ := c.Deployments().Info(d.ID, nil)
	if after.TaskGroups["web"].HealthyAllocs != 0 || after.TaskGroups["web"].UnhealthyAllocs != 0 {
		t.Fatalf("a refused request changed the deployment: %+v", after.TaskGroups["web"])
	}
	// An unhealthy verdict fails the deployment in the same write.
	if _, _, err := c.Deployments().SetAllocHealth(d.ID, nil, ids[:1], nil); err != nil {
		t.Fatal(err)
	}
	if f := waitStatus(t, c, d.ID, "failed"); f.StatusDescription != "Failed due to unhealthy allocations" {
		t.Fatalf("after an unhealthy verdict: %q", f.StatusDescription)
	}
}
