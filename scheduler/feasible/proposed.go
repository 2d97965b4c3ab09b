package feasible

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
)

// ProposedAllocs returns the allocations that will hold resources on the
// node if the plan commits.
//
// PROMISE 1: an allocation the plan stops (NodeUpdate) is still returned, in
// its stopped version, unless it is client-terminal or the plan marks it
// lost: its client has not stopped it yet, so its CPU, memory, disk and ports
// are still in use. An in-place update in NodeAllocation replaces the
// existing version; a new placement is added. Allocations that no longer
// hold resources (client-terminal) are left out, because no fit check would
// count them.
//
// Callers that ask where the job "is" (distinct_hosts, anti-affinity) must
// skip the stopped allocations themselves (Allocation.TerminalStatus).
func (c *EvalContext) ProposedAllocs(nodeID string) ([]*structs.Allocation, error) {
	existing, err := c.allocsOnNode(nodeID)
	if err != nil {
		return nil, err
	}
	var updates, placed []*structs.Allocation
	if c.plan != nil {
		updates = c.plan.NodeUpdate[nodeID]
		placed = c.plan.NodeAllocation[nodeID]
	}
	if len(updates) == 0 && len(placed) == 0 {
		out := make([]*structs.Allocation, 0, len(existing))
		for _, a := range existing {
			if a.HoldsResources() {
				out = append(out, a)
			}
		}
		return out, nil
	}

	// Newest version of each alloc wins: state, then the plan's stop, then
	// the plan's placement or in-place update. A stop in the same plan as an
	// update of the same alloc means the stop is final, so it wins.
	byID := make(map[string]*structs.Allocation, len(existing)+len(placed))
	order := make([]string, 0, len(existing)+len(placed))
	put := func(a *structs.Allocation) {
		if _, ok := byID[a.ID]; !ok {
			order = append(order, a.ID)
		}
		byID[a.ID] = a
	}
	for _, a := range existing {
		put(a)
	}
	for _, a := range placed {
		put(a)
	}
	for _, a := range updates {
		put(a)
	}
	out := make([]*structs.Allocation, 0, len(order))
	for _, id := range order {
		if a := byID[id]; a.HoldsResources() {
			out = append(out, a)
		}
	}
	return out, nil
}

// allocsOnNode reads the node's allocations from the snapshot once.
func (c *EvalContext) allocsOnNode(nodeID string) ([]*structs.Allocation, error) {
	if allocs, ok := c.stateAllocs[nodeID]; ok {
		return allocs, nil
	}
	if c.state == nil {
		return nil, nil
	}
	allocs, err := c.state.AllocsByNode(nil, nodeID)
	if err != nil {
		return nil, fmt.Errorf("reading allocations of node %s: %w", structs.ShortID(nodeID), err)
	}
	c.stateAllocs[nodeID] = allocs
	return allocs, nil
}
