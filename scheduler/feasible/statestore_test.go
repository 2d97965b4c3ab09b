package feasible

import (
	"math/rand"
	"testing"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/nomad/state/statetest"
	"github.com/drover-sched/drover/structs"
)

// The contract says a state snapshot is a State; check it at compile time
// and run promise 1 through the real store once.
var _ State = (*state.StateSnapshot)(nil)

func TestStackOnTheRealStateStore(t *testing.T) {
	store := statetest.New(t)
	node := MockNode()
	if err := store.Write(10, func(tx *state.Txn) error { return tx.UpsertNode(node, nil) }); err != nil {
		t.Fatal(err)
	}
	job := portJob(6000)
	if err := store.Write(11, func(tx *state.Txn) error { return tx.UpsertJob(job) }); err != nil {
		t.Fatal(err)
	}
	old := runningPortAlloc(job, node)
	old.DesiredStatus = structs.AllocDesiredStatusStop
	if err := store.Write(12, func(tx *state.Txn) error { return tx.UpsertAllocs([]*structs.Allocation{old}) }); err != nil {
		t.Fatal(err)
	}

	selectOnce := func() (*RankedNode, *structs.AllocMetric) {
		snap, err := store.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		nodes, _, err := ReadyNodesInDCsAndPool(snap, job.Datacenters, job.NodePool)
		if err != nil {
			t.Fatal(err)
		}
		plan := &structs.Plan{NodeUpdate: map[string][]*structs.Allocation{}, NodeAllocation: map[string][]*structs.Allocation{}}
		ctx := NewEvalContext(snap, plan, rand.New(rand.NewSource(1)), nil)
		s := NewGenericStack(false, ctx)
		s.SetNodes(nodes)
		s.SetJob(job)
		return s.Select(job.TaskGroups[0], nil), ctx.Metrics()
	}

	if option, m := selectOnce(); option != nil || m.NodesExhausted != 1 {
		t.Fatalf("the stopping allocation still holds memory and port 8080: got %v, metrics %+v", option != nil, m)
	}
	done := old.Copy()
	done.ClientStatus = structs.AllocClientStatusComplete
	if err := store.Write(13, func(tx *state.Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{done}) }); err != nil {
		t.Fatal(err)
	}
	if option, m := selectOnce(); option == nil {
		t.Fatalf("once the client reports it complete, the node has room: %+v", m)
	}
}
