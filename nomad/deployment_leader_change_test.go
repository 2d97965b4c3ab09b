package nomad

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// A deployment survives a leader change: the new leader's watcher reads it
// from the replicated state and fails it when an alloc of it turns
// unhealthy after the election.
func TestANewLeaderFailsADeploymentFromReplicatedState(t *testing.T) {
	t.Parallel()
	servers := startCluster(t, 3)
	leader := WaitForLeader(t, 10*time.Second, servers...)

	if _, _, err := leader.raftApply(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: fsmTestNode("n1")}); err != nil {
		t.Fatal(err)
	}
	job := itJob("web", 1)
	// An update block, so that the scheduler (which the watcher's evals
	// run) keeps the deployment going rather than finding nothing to
	// deploy.
	job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, HealthCheck: "task_states",
		MinHealthyTime: time.Second, HealthyDeadline: time.Minute, ProgressDeadline: time.Hour}
	if _, _, err := leader.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job}); err != nil {
		t.Fatal(err)
	}
	stored, _ := leader.State().JobByID(nil, structs.DefaultNamespace, job.ID)
	alloc := &structs.Allocation{
		ID: structs.GenerateUUID(), Namespace: stored.Namespace, EvalID: structs.GenerateUUID(), Name: structs.AllocName(job.ID, "web", 0),
		NodeID: "n1", JobID: job.ID, Job: stored, TaskGroup: stored.TaskGroups[0].Name, DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus: structs.AllocClientStatusRunning, DeploymentID: structs.GenerateUUID(),
	}
	dep := &structs.Deployment{ID: alloc.DeploymentID, Namespace: stored.Namespace, JobID: job.ID, JobVersion: stored.Version,
		JobCreateIndex: stored.CreateIndex, Status: structs.DeploymentStatusRunning,
		TaskGroups: map[string]*structs.DeploymentState{alloc.TaskGroup: {DesiredTotal: 1, ProgressDeadline: time.Hour}}}
	if _, _, err := leader.raftApply(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocsUpdated: []*structs.Allocation{alloc}, Job: stored, Deployment: dep, UpdatedAt: time.Now().UnixNano()}); err != nil {
		t.Fatal(err)
	}
	// The first leader's watcher has seen it: it asked for an eval.
	WaitFor(t, 10*time.Second, func() (bool, string) {
		evals, _ := leader.State().EvalsByJob(nil, structs.DefaultNamespace, job.ID)
		for _, e := range evals {
			if e.TriggeredBy == structs.EvalTriggerDeploymentWatcher && e.DeploymentID == dep.ID {
				return true, ""
			}
		}
		return false, "no watcher eval yet"
	})

	if err := leader.Shutdown(); err != nil {
		t.Fatal(err)
	}
	var rest []*Server
	for _, s := range servers {
		if s != leader {
			rest = append(rest, s)
		}
	}
	next := WaitForLeader(t, 20*time.Second, rest...)
	unhealthy := &structs.Allocation{ID: alloc.ID, ClientStatus: structs.AllocClientStatusRunning,
		DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: structs.BoolPtr(false), Timestamp: time.Now()}}
	if _, _, err := next.raftApply(structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{
		Alloc: []*structs.Allocation{unhealthy}, UpdatedAt: time.Now().UnixNano()}); err != nil {
		t.Fatal(err)
	}
	for _, s := range rest {
		WaitFor(t, 20*time.Second, func() (bool, string) {
			d, _ := s.State().DeploymentByID(nil, dep.ID)
			return d != nil && d.Status == structs.DeploymentStatusFailed &&
					d.StatusDescription == structs.DeploymentStatusDescriptionFailedAllocations,
				"deployment not failed on every server yet"
		})
	}
}
