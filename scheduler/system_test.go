package scheduler

import (
	"testing"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/scheduler/feasible"
	"github.com/drover-sched/drover/structs"
)

func systemJob(typ string) *structs.Job {
	j := feasible.MockSystemJob()
	j.Type = typ
	j.TaskGroups[0].ReschedulePolicy = nil
	j.TaskGroups[0].Update = nil
	j.TaskGroups[0].Migrate = nil
	j.Canonicalize()
	return j
}

func onNode(allocs []*structs.Allocation) map[string]int {
	return countBy(allocs, func(a *structs.Allocation) string { return a.NodeID })
}

func TestSystemJobRunsOnEveryNodeAndOnNewNodes(t *testing.T) {
	h := NewHarness(t)
	nodes := h.Nodes(4)
	h.Node(func(n *structs.Node) { n.Attributes = n.Attributes.With("kernel.name", "windows") }) // filtered by the constraint
	job := h.Job(systemJob(structs.JobTypeSystem))
	e := h.Run(job, structs.EvalTriggerJobRegister)
	per := onNode(h.Live(job))
	if len(per) != 4 {
		t.Fatalf("allocs per node = %v", per)
	}
	for _, n := range nodes {
		if per[n.ID] != 1 {
			t.Fatalf("node %s has %d allocs", n.ID, per[n.ID])
		}
	}
	u := h.LastUpdate(e.ID)
	if u.Status != structs.EvalStatusComplete || len(u.FailedTGAllocs) != 0 || u.BlockedEval != "" {
		t.Fatalf("a filtered node is not a failure: %+v", u)
	}

	added := h.Node(nil)
	h.Run(job, structs.EvalTriggerNodeUpdate)
	if per := onNode(h.Live(job)); per[added.ID] != 1 || len(per) != 5 {
		t.Fatalf("new node: %v", per)
	}
}

func TestSystemAllocOnANodeThatStopsMatchingIsStopped(t *testing.T) {
	h := NewHarness(t)
	nodes := h.Nodes(2)
	job := h.Job(systemJob(structs.JobTypeSystem))
	h.Run(job, structs.EvalTriggerJobRegister)
	h.ClientAll(job, structs.AllocClientStatusRunning, func(*structs.Allocation) bool { return true })

	changed := nodes[0].Copy()
	changed.Attributes = changed.Attributes.With("kernel.name", "darwin")
	feasible.MockComputeClass(changed)
	if err := h.State.Write(h.next(), func(tx *state.Txn) error { return tx.UpsertNode(changed, nil) }); err != nil {
		t.Fatal(err)
	}
	h.Run(job, structs.EvalTriggerNodeUpdate)
	per := onNode(h.Live(job))
	if per[nodes[0].ID] != 0 || per[nodes[1].ID] != 1 {
		t.Fatalf("allocs per node after the change: %v", per)
	}
}

func TestSystemAllocOnADownNodeIsLostNotMoved(t *testing.T) {
	h := NewHarness(t)
	nodes := h.Nodes(3)
	job := h.Job(systemJob(structs.JobTypeSystem))
	h.Run(job, structs.EvalTriggerJobRegister)
	h.NodeStatus(nodes[0].ID, structs.NodeStatusDown)
	h.Run(job, structs.EvalTriggerNodeUpdate)
	per := onNode(h.Live(job))
	if len(per) != 2 || per[nodes[0].ID] != 0 {
		t.Fatalf("allocs per node: %v", per)
	}
	for _, a := range h.Allocs(job) {
		if a.NodeID == nodes[0].ID && a.ClientStatus != structs.AllocClientStatusLost {
			t.Fatalf("alloc on the down node is %s", a.ClientStatus)
		}
	}
}

func TestSysbatchIsNotRunAgainAfterItCompletes(t *testing.T) {
	h := NewHarness(t)
	h.Nodes(3)
	job := h.Job(systemJob(structs.JobTypeSysBatch))
	h.Run(job, structs.EvalTriggerJobRegister)
	h.ClientAll(job, structs.AllocClientStatusComplete, func(*structs.Allocation) bool { return true })
	n := len(h.Plans)
	h.Run(job, structs.EvalTriggerNodeUpdate)
	if len(h.Plans) != n || len(h.Allocs(job)) != 3 {
		t.Fatalf("sysbatch ran again: %s", names(h.Allocs(job)))
	}
	// A new node still gets its run.
	h.Node(nil)
	h.Run(job, structs.EvalTriggerNodeUpdate)
	if got := len(h.Allocs(job)); got != 4 {
		t.Fatalf("%d allocs, want 4", got)
	}
}

func TestSystemDestructiveUpdateOnAFullNodeWaitsInsteadOfOvercommitting(t *testing.T) {
	h := NewHarness(t)
	h.Node(nil)
	j := systemJob(structs.JobTypeSystem)
	j.TaskGroups[0].Tasks[0].Resources.CPU = 3000 // most of the node
	job := h.Job(j)
	h.Run(job, structs.EvalTriggerJobRegister)
	old := h.Live(job)[0]
	h.Client(old, structs.AllocClientStatusRunning)

	up := job.Copy()
	up.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"}
	job = h.Job(up)
	e := h.Run(job, structs.EvalTriggerJobRegister) // the harness fails the test on an overcommit
	if o := h.Alloc(old.ID); o.DesiredStatus != structs.AllocDesiredStatusStop {
		t.Fatalf("old version not stopped: %s", o.DesiredStatus)
	}
	u := h.LastUpdate(e.ID)
	if u.QueuedAllocations["web"] != 1 || u.BlockedEval == "" {
		t.Fatalf("new version should wait for the old one to stop: %+v", u)
	}
	// The client stops the old version; the blocked eval places the new one.
	h.Client(h.Alloc(old.ID), structs.AllocClientStatusComplete)
	h.Process(h.CreatedBy(structs.EvalTriggerQueuedAllocs)[0])
	live := h.Live(job)
	if len(live) != 1 || live[0].Job.Version != job.Version {
		t.Fatalf("live = %s", names(live))
	}
}
