package scheduler

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// systemDisconnectSetup runs a system (or sysbatch) job with a disconnect
// block on 2 nodes, reports every alloc running, and disconnects the first
// node. It returns the job, the alloc on that node and the node's ID.
func systemDisconnectSetup(t *testing.T, h *Harness, typ string) (*structs.Job, *structs.Allocation, string) {
	t.Helper()
	nodes := h.Nodes(2)
	j := systemJob(typ)
	j.TaskGroups[0].Disconnect = &structs.DisconnectStrategy{LostAfter: 10 * time.Minute}
	j.Canonicalize()
	job := h.Job(j)
	h.Run(job, structs.EvalTriggerJobRegister)
	h.ClientAll(job, structs.AllocClientStatusRunning, func(*structs.Allocation) bool { return true })
	var orig *structs.Allocation
	for _, a := range h.Live(job) {
		if a.NodeID == nodes[0].ID {
			orig = a
		}
	}
	if orig == nil {
		t.Fatalf("no alloc on the first node: %s", names(h.Allocs(job)))
	}
	h.Now = h.Now.Add(time.Minute)
	h.NodeStatus(nodes[0].ID, structs.NodeStatusDisconnected)
	h.Run(job, structs.EvalTriggerNodeUpdate)
	o := h.Alloc(orig.ID)
	if o.ClientStatus != structs.AllocClientStatusUnknown || o.FollowupEvalID == "" {
		t.Fatalf("alloc on the disconnected node = %s (timeout eval %q), want unknown with a timeout", o.ClientStatus, o.FollowupEvalID)
	}
	if per := onNode(h.Live(job)); len(per) != 2 || per[nodes[0].ID] != 1 {
		t.Fatalf("a system alloc must wait on its node, not move: %v", per)
	}
	return job, o, nodes[0].ID
}

// The system scheduler's reconnect, end to end over the state store: the
// node comes back (its alloc is left alone until reported), the client
// reports the alloc running, and the reconnect evaluation keeps it on its
// node, records [unknown, running] in AllocStates, places nothing and
// cancels the disconnect timeout.
func TestSystemAllocReconnectsOnItsNode(t *testing.T) {
	h := NewHarness(t)
	job, orig, node := systemDisconnectSetup(t, h, structs.JobTypeSystem)
	h.Now = h.Now.Add(2 * time.Minute)
	h.NodeStatus(node, structs.NodeStatusReady)
	h.Run(job, structs.EvalTriggerNodeUpdate)
	if o := h.Alloc(orig.ID); o.ClientStatus != structs.AllocClientStatusUnknown || o.DesiredStatus != structs.AllocDesiredStatusRun {
		t.Fatalf("unreported alloc touched: %s/%s", o.DesiredStatus, o.ClientStatus)
	}
	if got := len(h.Allocs(job)); got != 2 {
		t.Fatalf("%d allocs before the report, want 2: %s", got, names(h.Allocs(job)))
	}

	h.Client(h.Alloc(orig.ID), structs.AllocClientStatusRunning)
	h.Run(job, structs.EvalTriggerReconnect)
	o := h.Alloc(orig.ID)
	if o.DesiredStatus != structs.AllocDesiredStatusRun || o.ClientStatus != structs.AllocClientStatusRunning || o.NeedsToReconnect() {
		t.Fatalf("reconnected alloc = %s/%s, states %+v", o.DesiredStatus, o.ClientStatus, o.AllocStates)
	}
	var history []string
	for _, s := range o.AllocStates {
		history = append(history, s.Value)
	}
	if len(history) != 2 || history[0] != structs.AllocClientStatusUnknown || history[1] != structs.AllocClientStatusRunning {
		t.Fatalf("AllocStates = %v, want [unknown running]", history)
	}
	if per := onNode(h.Live(job)); len(per) != 2 || per[node] != 1 || len(h.Allocs(job)) != 2 {
		t.Fatalf("after the reconnect: %s", names(h.Allocs(job)))
	}
	canceled := false
	for _, e := range h.Updated {
		canceled = canceled || (e.ID == orig.FollowupEvalID && e.Status == structs.EvalStatusCancelled)
	}
	if !canceled {
		t.Fatalf("disconnect timeout %s not canceled", orig.FollowupEvalID)
	}
}

// A sysbatch alloc that completed while its node was away is recorded when
// the client reports it, and not run again on that node.
func TestSysbatchAllocThatCompletedWhileAwayIsNotRunAgain(t *testing.T) {
	h := NewHarness(t)
	job, orig, node := systemDisconnectSetup(t, h, structs.JobTypeSysBatch)
	h.NodeStatus(node, structs.NodeStatusReady)
	h.Client(h.Alloc(orig.ID), structs.AllocClientStatusComplete)
	h.Run(job, structs.EvalTriggerReconnect)
	if o := h.Alloc(orig.ID); o.NeedsToReconnect() {
		t.Fatalf("reconnect not recorded: %+v", o.AllocStates)
	}
	if got := len(h.Allocs(job)); got != 2 {
		t.Fatalf("sysbatch ran again: %s", names(h.Allocs(job)))
	}
}

// A system alloc that failed while its node was away is replaced on the
// same node once reported, the failed one linked to its replacement.
func TestSystemAllocThatFailedWhileAwayIsReplacedOnItsNode(t *testing.T) {
	h := NewHarness(t)
	job, orig, node := systemDisconnectSetup(t, h, structs.JobTypeSystem)
	h.NodeStatus(node, structs.NodeStatusReady)
	h.Client(h.Alloc(orig.ID), structs.AllocClientStatusFailed)
	h.Run(job, structs.EvalTriggerReconnect)
	o := h.Alloc(orig.ID)
	if o.NeedsToReconnect() || o.NextAllocation == "" || o.DesiredStatus != structs.AllocDesiredStatusStop {
		t.Fatalf("failed alloc after the reconnect: %s next=%q states %+v", o.DesiredStatus, o.NextAllocation, o.AllocStates)
	}
	if n := h.Alloc(o.NextAllocation); n.NodeID != node || n.PreviousAllocation != o.ID {
		t.Fatalf("replacement on %s (previous %s), want on %s", n.NodeID, n.PreviousAllocation, node)
	}
	if per := onNode(h.Live(job)); len(per) != 2 || per[node] != 1 {
		t.Fatalf("live allocs per node: %v", per)
	}
}
