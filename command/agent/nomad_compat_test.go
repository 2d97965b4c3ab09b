package agent

import (
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
)

// TestNomadClientAgainstDevAgent drives a dev agent with Nomad's own Go
// client (DESIGN.md, "Compatibility"): every call must succeed and return
// what Drover holds.
func TestNomadClientAgainstDevAgent(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, nil)
	c, err := nomad.NewClient(&nomad.Config{Address: a.URL})
	if err != nil {
		t.Fatal(err)
	}

	job := nomad.NewServiceJob("compat", "compat", "global", 60).AddDatacenter("dc1")
	task := nomad.NewTask("app", "mock_driver").SetConfig("run_for", "1h").SetConfig("stdout_string", "compat output\n")
	task.Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(64)})
	job.AddTaskGroup(nomad.NewTaskGroup("web", 1).AddTask(task))

	reg, wm, err := c.Jobs().Register(job, nil)
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	if reg.EvalID == "" || wm.LastIndex == 0 {
		t.Fatalf("register response: %+v %+v", reg, wm)
	}

	stubs, qm, err := c.Jobs().List(nil)
	if err != nil || len(stubs) != 1 || stubs[0].ID != "compat" || stubs[0].JobSummary == nil || qm.LastIndex == 0 || !qm.KnownLeader {
		t.Fatalf("list: %v %+v %+v", err, stubs, qm)
	}
	got, _, err := c.Jobs().Info("compat", nil)
	if err != nil || *got.ID != "compat" || *got.Name != "compat" || *got.Type != "service" || *got.Priority != 60 ||
		got.Status == nil || len(got.TaskGroups) != 1 || *got.TaskGroups[0].Count != 1 || got.TaskGroups[0].Tasks[0].Driver != "mock_driver" {
		t.Fatalf("info: %v %+v", err, got)
	}

	var allocs []*nomad.AllocationListStub
	waitUntil(t, "the alloc to run", func() bool {
		allocs, _, err = c.Jobs().Allocations("compat", false, nil)
		if err != nil {
			t.Fatalf("allocations: %v", err)
		}
		return len(allocs) == 1 && allocs[0].ClientStatus == "running"
	})
	if allocs[0].NodeID != a.NodeID() || allocs[0].JobID != "compat" {
		t.Fatalf("alloc stub: %+v", allocs[0])
	}
	alloc, _, err := c.Allocations().Info(allocs[0].ID, nil)
	if err != nil || alloc.ID != allocs[0].ID || alloc.Job == nil || alloc.TaskStates["app"] == nil {
		t.Fatalf("alloc info: %v %+v", err, alloc)
	}
	var logs string
	waitUntil(t, "the task's output through AllocFS().Logs", func() bool {
		cancel := make(chan struct{})
		defer close(cancel)
		frames, errs := c.AllocFS().Logs(alloc, false, "app", "stdout", "start", 0, cancel, nil)
		logs = ""
		for {
			select {
			case f, ok := <-frames:
				if !ok {
					return logs == "compat output\n"
				}
				logs += string(f.Data)
			case err := <-errs:
				t.Fatalf("logs: %v", err)
			}
		}
	})
	evals, _, err := c.Jobs().Evaluations("compat", nil)
	if err != nil || len(evals) == 0 {
		t.Fatalf("evaluations: %v %+v", err, evals)
	}
	found := false
	for _, e := range evals {
		found = found || e.ID == reg.EvalID
	}
	if !found {
		t.Fatalf("the register eval %s is not among the job's evals", reg.EvalID)
	}
	ev, _, err := c.Evaluations().Info(reg.EvalID, nil)
	if err != nil || ev.JobID != "compat" || ev.Status != "complete" {
		t.Fatalf("eval info: %v %+v", err, ev)
	}
	sum, _, err := c.Jobs().Summary("compat", nil)
	if err != nil || sum.JobID != "compat" || sum.Summary["web"].Running != 1 {
		t.Fatalf("summary: %v %+v", err, sum)
	}

	nodes, _, err := c.Nodes().List(nil)
	if err != nil || len(nodes) != 1 || nodes[0].ID != a.NodeID() || nodes[0].Status != "ready" || nodes[0].NodeResources == nil {
		t.Fatalf("nodes: %v %+v", err, nodes)
	}
	node, _, err := c.Nodes().Info(a.NodeID(), nil)
	if err != nil || node.ID != a.NodeID() || node.HTTPAddr != a.Addr || node.NodeResources == nil || node.Drivers["mock_driver"] == nil {
		t.Fatalf("node info: %v %+v", err, node)
	}

	dr, err := c.Nodes().UpdateDrain(a.NodeID(), &nomad.DrainSpec{Deadline: time.Hour, IgnoreSystemJobs: true}, false, nil)
	if err != nil || dr.NodeModifyIndex == 0 {
		t.Fatalf("drain: %v %+v", err, dr)
	}
	node, _, err = c.Nodes().Info(a.NodeID(), nil)
	if err != nil || node.DrainStrategy == nil || node.DrainStrategy.Deadline != time.Hour || node.SchedulingEligibility != "ineligible" {
		t.Fatalf("draining node: %v %+v", err, node)
	}
	if _, err := c.Nodes().UpdateDrain(a.NodeID(), nil, false, nil); err != nil {
		t.Fatalf("stop drain: %v", err)
	}
	if _, err := c.Nodes().ToggleEligibility(a.NodeID(), true, nil); err != nil {
		t.Fatalf("eligibility: %v", err)
	}
	node, _, err = c.Nodes().Info(a.NodeID(), nil)
	if err != nil || node.DrainStrategy != nil || node.SchedulingEligibility != "eligible" {
		t.Fatalf("re-enabled node: %v %+v", err, node)
	}

	evalID, wm, err := c.Jobs().Deregister("compat", false, nil)
	if err != nil || evalID == "" || wm.LastIndex == 0 {
		t.Fatalf("deregister: %v %q", err, evalID)
	}
	got, _, err = c.Jobs().Info("compat", nil)
	if err != nil || got.Stop == nil || !*got.Stop {
		t.Fatalf("stopped job: %v %+v", err, got)
	}

	leader, err := c.Status().Leader()
	if err != nil || leader != a.RPCAddr() {
		t.Fatalf("leader: %v %q, want %q", err, leader, a.RPCAddr())
	}
	peers, err := c.Status().Peers()
	if err != nil || len(peers) != 1 || peers[0] != a.RPCAddr() {
		t.Fatalf("peers: %v %v", err, peers)
	}
	raft, err := c.Operator().RaftGetConfiguration(nil)
	if err != nil || len(raft.Servers) != 1 || !raft.Servers[0].Leader || raft.Servers[0].Address != a.RPCAddr() {
		t.Fatalf("raft configuration: %v %+v", err, raft)
	}
	self, err := c.Agent().Self()
	if err != nil || self.Config["Region"] != "global" || self.Stats["client"]["node_id"] != a.NodeID() {
		t.Fatalf("agent self: %v %+v", err, self)
	}
	members, err := c.Agent().Members()
	if err != nil || len(members.Members) != 1 || members.Members[0].Status != "alive" {
		t.Fatalf("members: %v %+v", err, members)
	}
	regions, err := c.Regions().List()
	if err != nil || len(regions) != 1 || regions[0] != "global" {
		t.Fatalf("regions: %v %v", err, regions)
	}
}
