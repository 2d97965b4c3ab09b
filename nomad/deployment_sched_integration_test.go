package nomad

import (
	"fmt"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// A rolling update through one real server (raft, workers, the generic
// scheduler, the plan applier): the first run creates a deployment the
// scheduler completes once its clients report health, and a new version
// replaces one alloc at a time, each only after the previous one's client
// reported it healthy. The deployment watcher is not needed: each step is
// kicked with Job.Evaluate, as the watcher would on new health.
func TestRollingUpdateIsPacedByClientHealthThroughThePipeline(t *testing.T) {
	t.Parallel()
	s := testServer(t, func(c *Config) { c.NumSchedulers = 2 })
	WaitForLeader(t, 5*time.Second, s)
	registerNode(t, s, itNode("n1"))
	registerNode(t, s, itNode("n2"))
	job := itJob("roll", 3)
	job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, Stagger: time.Hour,
		HealthCheck: structs.UpdateHealthCheckTaskStates, MinHealthyTime: time.Second,
		HealthyDeadline: time.Minute, ProgressDeadline: 10 * time.Minute}
	registerJob(t, s, job)

	latest := func() *structs.Deployment {
		d, err := s.State().LatestDeploymentByJobID(nil, structs.DefaultNamespace, "roll")
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	version := func() uint64 {
		j, _ := s.State().JobByID(nil, structs.DefaultNamespace, "roll")
		return j.Version
	}
	// live splits the desired-running allocs into those of the current
	// version and the others.
	live := func() (cur, old []*structs.Allocation) {
		v := version()
		for _, a := range desiredRunning(jobAllocs(t, s, "roll")) {
			if a.Job.Version == v {
				cur = append(cur, a)
			} else {
				old = append(old, a)
			}
		}
		return cur, old
	}
	healthy := func(a *structs.Allocation) bool {
		return a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil && *a.DeploymentStatus.Healthy
	}
	reportHealthy := func(a *structs.Allocation) {
		t.Helper()
		n, _ := s.State().NodeByID(nil, a.NodeID)
		var resp structs.GenericResponse
		err := s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{NodeID: n.ID, SecretID: n.SecretID,
			Alloc: []*structs.Allocation{{ID: a.ID, NodeID: a.NodeID, ClientStatus: structs.AllocClientStatusRunning,
				DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: structs.BoolPtr(true), Timestamp: time.Now()}}}}, &resp)
		if err != nil {
			t.Fatalf("health report of %s: %v", a.ID, err)
		}
	}
	// evaluate runs one eval of the job to completion.
	evaluate := func() {
		t.Helper()
		var resp structs.JobRegisterResponse
		if err := s.RPC("Job.Evaluate", &structs.JobEvaluateRequest{JobID: "roll"}, &resp); err != nil {
			t.Fatal(err)
		}
		WaitFor(t, 10*time.Second, func() (bool, string) {
			st := evalStatus(t, s, resp.EvalID)
			return st == structs.EvalStatusComplete, "eval " + st
		})
	}

	WaitFor(t, 10*time.Second, func() (bool, string) {
		cur, _ := live()
		d := latest()
		return len(cur) == 3 && d != nil, fmt.Sprintf("%d allocs, deployment %v", len(cur), d != nil)
	})
	first := latest()
	cur, _ := live()
	for _, a := range cur {
		if a.DeploymentID != first.ID {
			t.Fatalf("alloc %s not in deployment %s", a.Name, first.ID)
		}
		reportHealthy(a)
	}
	evaluate()
	if d := latest(); d.Status != structs.DeploymentStatusSuccessful {
		t.Fatalf("first deployment = %s %q", d.Status, d.StatusDescription)
	}
	if j, _ := s.State().JobByID(nil, structs.DefaultNamespace, "roll"); !j.Stable {
		t.Fatal("the deployed version is not stable")
	}

	next := itJob("roll", 3)
	next.TaskGroups[0].Update = job.TaskGroups[0].Update
	next.TaskGroups[0].Tasks[0].Env = map[string]string{"VERSION": "2"}
	registerJob(t, s, next)
	for placed := 1; placed <= 3; placed++ {
		WaitFor(t, 10*time.Second, func() (bool, string) {
			cur, old := live()
			return len(cur) == placed && len(old) == 3-placed, fmt.Sprintf("%d new %d old, want %d new", len(cur), len(old), placed)
		})
		// Without new health another eval places nothing more.
		evaluate()
		cur, old := live()
		if len(cur) != placed || len(old) != 3-placed {
			t.Fatalf("placed %d new (%d old) before the last one was healthy, want %d", len(cur), len(old), placed)
		}
		for _, a := range cur {
			if a.DeploymentID != latest().ID || latest().ID == first.ID {
				t.Fatalf("new alloc %s in deployment %q", a.Name, a.DeploymentID)
			}
			if !healthy(a) {
				reportHealthy(a)
			}
		}
		evaluate()
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		d := latest()
		return d.Status == structs.DeploymentStatusSuccessful, "deployment " + d.Status
	})
}
