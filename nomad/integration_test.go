package nomad

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// These tests drive one real server (raft, FSM, broker, workers, the real
// schedulers and plan applier) through its RPC endpoints, the way clients
// and the CLI do, with the heartbeat clock faked.

func itNode(id string) *structs.Node {
	n := &structs.Node{
		ID: id, SecretID: structs.GenerateUUID(), Name: id, Datacenter: "dc1", Status: structs.NodeStatusReady,
		Attributes: structs.NewAttributes(map[string]string{"kernel.name": "linux", "unique.network.ip-address": "127.0.0.1", "driver.mock": "1"}),
		NodeResources: &structs.NodeResources{
			Cpu: structs.NodeCpuResources{CpuShares: 4000}, Memory: structs.NodeMemoryResources{MemoryMB: 4096},
			Disk: structs.NodeDiskResources{DiskMB: 20000},
		},
		Drivers: map[string]*structs.DriverInfo{"mock": {Detected: true, Healthy: true}},
	}
	return n
}

func itJob(id string, count int) *structs.Job {
	return &structs.Job{ID: id, Type: structs.JobTypeService, TaskGroups: []*structs.TaskGroup{{
		Name: "web", Count: count,
		Tasks: []*structs.Task{{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1h"},
			Resources: &structs.Resources{CPU: 100, MemoryMB: 128}}},
	}}}
}

func registerNode(t *testing.T, s *Server, n *structs.Node) *structs.NodeUpdateResponse {
	t.Helper()
	var resp structs.NodeUpdateResponse
	if err := s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: n}, &resp); err != nil {
		t.Fatalf("registering node %s: %v", n.ID, err)
	}
	return &resp
}

func registerJob(t *testing.T, s *Server, j *structs.Job) *structs.JobRegisterResponse {
	t.Helper()
	var resp structs.JobRegisterResponse
	if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: j}, &resp); err != nil {
		t.Fatalf("registering job %s: %v", j.ID, err)
	}
	return &resp
}

func jobAllocs(t *testing.T, s *Server, jobID string) []*structs.Allocation {
	t.Helper()
	allocs, err := s.State().AllocsByJob(nil, structs.DefaultNamespace, jobID, true)
	if err != nil {
		t.Fatal(err)
	}
	return allocs
}

func desiredRunning(allocs []*structs.Allocation) []*structs.Allocation {
	var out []*structs.Allocation
	for _, a := range allocs {
		if a.DesiredStatus == structs.AllocDesiredStatusRun && !a.ClientTerminalStatus() {
			out = append(out, a)
		}
	}
	return out
}

// reportAlloc is the alloc's client reporting its status, as itself.
func reportAlloc(s *Server, a *structs.Allocation, status string) error {
	n, err := s.State().NodeByID(nil, a.NodeID)
	if err != nil || n == nil {
		return fmt.Errorf("node %s of alloc %s: %v", a.NodeID, a.ID, err)
	}
	var resp structs.GenericResponse
	return s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{NodeID: n.ID, SecretID: n.SecretID,
		Alloc: []*structs.Allocation{{ID: a.ID, NodeID: a.NodeID, ClientStatus: status}}}, &resp)
}

// reportHealth is the alloc's client reporting it running with its health
// decided, as the client does for a service alloc once its migrate (or
// update) block's checks have held for min_healthy_time.
func reportHealth(s *Server, a *structs.Allocation, healthy bool) error {
	n, err := s.State().NodeByID(nil, a.NodeID)
	if err != nil || n == nil {
		return fmt.Errorf("node %s of alloc %s: %v", a.NodeID, a.ID, err)
	}
	var resp structs.GenericResponse
	return s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{NodeID: n.ID, SecretID: n.SecretID,
		Alloc: []*structs.Allocation{{ID: a.ID, NodeID: a.NodeID, ClientStatus: structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: structs.BoolPtr(healthy), Timestamp: s.Now()}}}}, &resp)
}

func evalStatus(t *testing.T, s *Server, id string) string {
	e, err := s.State().EvalByID(nil, id)
	if err != nil || e == nil {
		return ""
	}
	return e.Status
}

func TestJobRegisterPlacesAllocationsThroughThePipeline(t *testing.T) {
	t.Parallel()
	s := testServer(t, func(c *Config) { c.NumSchedulers = 2 })
	WaitForLeader(t, 5*time.Second, s)
	registerNode(t, s, itNode("n1"))
	registerNode(t, s, itNode("n2"))
	resp := registerJob(t, s, itJob("web", 5))
	if resp.EvalID == "" || resp.JobModifyIndex == 0 {
		t.Fatalf("register response incomplete: %+v", resp)
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		live := desiredRunning(jobAllocs(t, s, "web"))
		return len(live) == 5 && evalStatus(t, s, resp.EvalID) == structs.EvalStatusComplete,
			fmt.Sprintf("%d allocs, eval %s", len(live), evalStatus(t, s, resp.EvalID))
	})
	names := map[string]bool{}
	for _, a := range jobAllocs(t, s, "web") {
		if names[a.Name] {
			t.Fatalf("alloc name %s used twice", a.Name)
		}
		names[a.Name] = true
	}

	// Scale down: the highest indexes stop.
	j := itJob("web", 2)
	registerJob(t, s, j)
	WaitFor(t, 10*time.Second, func() (bool, string) {
		live := desiredRunning(jobAllocs(t, s, "web"))
		return len(live) == 2, fmt.Sprintf("%d live allocs", len(live))
	})
	for _, a := range desiredRunning(jobAllocs(t, s, "web")) {
		if a.Index() > 1 {
			t.Fatalf("scale down kept %s", a.Name)
		}
	}
}

func TestInvalidJobIsRefusedAndChangesNothing(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	before, _ := s.State().LatestIndex()
	j := itJob("bad", 1)
	j.TaskGroups[0].Tasks[0].Resources.MemoryMB = -5
	var resp structs.JobRegisterResponse
	err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: j}, &resp)
	if err == nil || !strings.Contains(err.Error(), `group "web" task "t": resources.memory must be > 0`) {
		t.Fatalf("want a validation error naming the field, got %v", err)
	}
	if after, _ := s.State().LatestIndex(); after != before {
		t.Fatal("a refused job changed the state")
	}

	// Check-and-set: a stale index is refused.
	registerJob(t, s, itJob("cas", 1))
	err = s.RPC("Job.Register", &structs.JobRegisterRequest{Job: itJob("cas", 2), EnforceIndex: true, JobModifyIndex: 1}, &resp)
	if err == nil || !strings.Contains(err.Error(), "conflicting job modify index") {
		t.Fatalf("want an index conflict, got %v", err)
	}
}

// Promise 1 end to end: a job stopped and re-run with the same static port
// waits for the old alloc to stop; it never collides with it.
func TestRerunWithSameStaticPortWaitsForTheOldAllocToStop(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	registerNode(t, s, itNode("n1"))
	job := itJob("pinned", 1)
	job.TaskGroups[0].Networks = structs.Networks{{ReservedPorts: []structs.Port{{Label: "http", Value: 8080}}}}
	registerJob(t, s, job)
	var first *structs.Allocation
	WaitFor(t, 10*time.Second, func() (bool, string) {
		live := desiredRunning(jobAllocs(t, s, "pinned"))
		if len(live) == 1 {
			first = live[0]
		}
		return first != nil, "waiting for the first alloc"
	})
	if err := reportAlloc(s, first, structs.AllocClientStatusRunning); err != nil {
		t.Fatal(err)
	}

	var dresp structs.JobDeregisterResponse
	if err := s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: "pinned"}, &dresp); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		a, _ := s.State().AllocByID(nil, first.ID)
		return a.DesiredStatus == structs.AllocDesiredStatusStop, "old alloc not stopped yet"
	})
	rerun := registerJob(t, s, job)
	// The old alloc still runs on its client: the new one must not be
	// placed on the port it holds.
	WaitFor(t, 10*time.Second, func() (bool, string) {
		st := evalStatus(t, s, rerun.EvalID)
		return st == structs.EvalStatusComplete || st == structs.EvalStatusBlocked, "rerun eval " + st
	})
	if live := desiredRunning(jobAllocs(t, s, "pinned")); len(live) != 0 {
		t.Fatalf("a new alloc was placed on port 8080 while the old one still runs: %s", live[0].ID)
	}
	// The client confirms the old alloc stopped: now the new one fits.
	if err := reportAlloc(s, first, structs.AllocClientStatusComplete); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		live := desiredRunning(jobAllocs(t, s, "pinned"))
		return len(live) == 1 && live[0].ID != first.ID, fmt.Sprintf("%d live allocs", len(live))
	})
}

func TestUpdateAllocIsRefusedForAnUnknownTransition(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	registerNode(t, s, itNode("n1"))
	a := registerOne(t, s, itJob("web", 1))
	if err := reportAlloc(s, a, structs.AllocClientStatusLost); err == nil {
		t.Fatal("a client must not be able to mark its alloc lost")
	}
	if err := reportAlloc(s, a, structs.AllocClientStatusComplete); err != nil {
		t.Fatal(err)
	}
	if err := reportAlloc(s, a, structs.AllocClientStatusRunning); err != nil {
		t.Fatalf("a late report about a finished alloc is ignored, not an error: %v", err)
	}
	got, _ := s.State().AllocByID(nil, a.ID)
	if got.ClientStatus != structs.AllocClientStatusComplete {
		t.Fatalf("a complete alloc came back to %s", got.ClientStatus)
	}
}

func TestJobPlanIsADryRunWithAnnotatedDiff(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	registerNode(t, s, itNode("n1"))
	registerJob(t, s, itJob("web", 1))
	WaitFor(t, 10*time.Second, func() (bool, string) {
		return len(desiredRunning(jobAllocs(t, s, "web"))) == 1, "not placed"
	})
	WaitFor(t, 10*time.Second, func() (bool, string) {
		evals, _ := s.State().EvalsByJob(nil, structs.DefaultNamespace, "web")
		return len(evals) == 1 && evals[0].Status == structs.EvalStatusComplete, "eval not complete"
	})
	before, _ := s.State().LatestIndex()
	var resp structs.JobPlanResponse
	if err := s.RPC("Job.Plan", &structs.JobPlanRequest{Job: itJob("web", 3), Diff: true}, &resp); err != nil {
		t.Fatal(err)
	}
	if after, _ := s.State().LatestIndex(); after != before {
		t.Fatal("a plan must not write anything")
	}
	if len(desiredRunning(jobAllocs(t, s, "web"))) != 1 {
		t.Fatal("a plan must not place allocations")
	}
	u := resp.Annotations.DesiredTGUpdates["web"]
	// A count change is a new job version: the running alloc moves to it
	// in place, as in Nomad ("2 create, 1 in-place update").
	if u == nil || u.Place != 2 || u.InPlaceUpdate != 1 || u.Stop != 0 {
		t.Fatalf("want 2 placements and 1 in-place update, got %+v", u)
	}
	if resp.Diff == nil || resp.Diff.Type != structs.DiffTypeEdited || resp.Diff.TaskGroups[0].Updates["create"] != 2 {
		t.Fatalf("diff not annotated: %+v", resp.Diff)
	}
	if resp.JobModifyIndex == 0 {
		t.Fatal("the plan must report the job modify index for -check-index")
	}
}

func TestNodeEvaluateCreatesEvalsForTheNodesJobs(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	registerNode(t, s, itNode("n1"))
	registerJob(t, s, itJob("web", 1))
	WaitFor(t, 10*time.Second, func() (bool, string) {
		return len(desiredRunning(jobAllocs(t, s, "web"))) == 1, "not placed"
	})
	var resp structs.NodeUpdateResponse
	if err := s.RPC("Node.Evaluate", &structs.NodeEvaluateRequest{NodeID: "n1"}, &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.EvalIDs) != 1 {
		t.Fatalf("want one eval for the node's one job, got %v", resp.EvalIDs)
	}
	e, _ := s.State().EvalByID(nil, resp.EvalIDs[0])
	if e == nil || e.JobID != "web" || e.NodeID != "n1" || e.TriggeredBy != structs.EvalTriggerNodeUpdate {
		t.Fatalf("eval wrong: %+v", e)
	}
	if err := s.RPC("Node.Evaluate", &structs.NodeEvaluateRequest{NodeID: "nope"}, &resp); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("an unknown node must be not found, got %v", err)
	}
}

func TestPeriodicJobWithABadSpecIsRefused(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	j := itJob("cron", 1)
	j.Type = structs.JobTypeBatch
	j.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "not a cron", SpecType: "cron"}
	before, _ := s.State().LatestIndex()
	var resp structs.JobRegisterResponse
	err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: j}, &resp)
	if err == nil || !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "not a cron") {
		t.Fatalf("want a bad request for an invalid cron spec, got %v", err)
	}
	if after, _ := s.State().LatestIndex(); after != before {
		t.Fatal("a refused periodic job changed the state")
	}
}

func TestConcurrentCheckAndSetRegistrationsHaveOneWinner(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	first := registerJob(t, s, itJob("cas", 1))
	const writers = 8
	errs := make(chan error, writers)
	for i := 0; i < writers; i++ {
		i := i
		go func() {
			var resp structs.JobRegisterResponse
			errs <- s.RPC("Job.Register", &structs.JobRegisterRequest{Job: itJob("cas", 2+i), EnforceIndex: true, JobModifyIndex: first.JobModifyIndex}, &resp)
		}()
	}
	wins := 0
	for i := 0; i < writers; i++ {
		err := <-errs
		switch {
		case err == nil:
			wins++
		case !strings.Contains(err.Error(), "conflicting job modify index"):
			t.Fatalf("unexpected error: %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d check-and-set registrations against the same index succeeded, want exactly 1", wins)
	}
}

// A service alloc its client reports complete while the servers still want
// it running (a client that fenced itself) is replaced.
func TestServiceAllocCompletedByItsClientIsReplaced(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	registerNode(t, s, itNode("n1"))
	a := placeOne(t, s, itJob("web", 1))
	if err := reportAlloc(s, a, structs.AllocClientStatusComplete); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		live := desiredRunning(jobAllocs(t, s, "web"))
		return len(live) == 1 && live[0].ID != a.ID, fmt.Sprintf("%d live allocs", len(live))
	})
}

func TestDrainingANodeMovesItsAllocs(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	registerNode(t, s, itNode("n1"))
	a := placeOne(t, s, itJob("web", 1))
	if err := reportHealth(s, a, true); err != nil {
		t.Fatal(err)
	}
	registerNode(t, s, itNode("n2"))
	var resp structs.NodeDrainUpdateResponse
	req := &structs.NodeUpdateDrainRequest{NodeID: "n1", DrainStrategy: &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour}}}
	if err := s.RPC("Node.UpdateDrain", req, &resp); err != nil {
		t.Fatal(err)
	}
	// The drainer marks the alloc (its health is decided) and the
	// scheduler moves it.
	WaitFor(t, 10*time.Second, func() (bool, string) {
		live := desiredRunning(jobAllocs(t, s, "web"))
		return len(live) == 1 && live[0].NodeID == "n2", fmt.Sprintf("%d live allocs", len(live))
	})
	n, _ := s.State().NodeByID(nil, "n1")
	if n.SchedulingEligibility != structs.NodeSchedulingIneligible || n.DrainStrategy == nil || n.DrainStrategy.ForceDeadline.IsZero() {
		t.Fatalf("draining node state wrong: %+v", n)
	}
}
