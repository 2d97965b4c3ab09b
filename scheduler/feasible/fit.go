package feasible

import (
	"errors"

	"github.com/drover-sched/drover/structs"
)

// Exhaustion dimensions that are not resource names.
const (
	dimDynamicPorts = "dynamic port selection failed"
	dimNetworkAsk   = "network: invalid ask"
	dimStateError   = "reading node allocations failed"
)

// fitResult is the outcome of fitting one allocation of a group on a node.
type fitResult struct {
	proposed  []*structs.Allocation
	resources *structs.AllocatedResources
	// util is what the node would have in use with the new allocation.
	util structs.ComparableResources
	// exhausted names the dimension that did not fit, "" if it fits.
	exhausted string
	// beforePorts says the group did not fit on CPU, memory or disk,
	// found before any port was drawn (fullNodes may remember it).
	beforePorts bool
	// remembered says the memo of full nodes holds the refusal: it stands
	// until the plan's entries for the node change.
	remembered bool
}

// fitGroup decides whether one more allocation of g fits on node next to
// the allocations the plan would leave there (ProposedAllocs, which applies
// promise 1), choosing its ports. The final word is structs.AllocsFit, the
// function the plan applier uses too. replacing, if set, is an allocation
// the placement updates in place, left out of the proposed allocations.
func fitGroup(ctx *EvalContext, g *groupInfo, node *structs.Node, replacing string) fitResult {
	proposed, err := ctx.ProposedAllocs(node.ID)
	if err != nil {
		ctx.logger.Warn("cannot fit on node", "node_id", node.ID, "error", err)
		return fitResult{exhausted: dimStateError}
	}
	if replacing != "" {
		kept := proposed[:0:0]
		for _, a := range proposed {
			if a.ID != replacing {
				kept = append(kept, a)
			}
		}
		proposed = kept
	}
	r := fitResult{proposed: proposed}

	// Sum first: the cheap check names cpu/memory/disk before any port
	// question, in the same order AllocsFit would.
	for _, a := range proposed {
		if a.HoldsResources() {
			r.util.Add(a.AllocatedResources.Comparable())
		}
	}
	r.util.Add(g.ask)
	if ok, dim := node.Comparable().Superset(r.util); !ok {
		r.exhausted, r.beforePorts = dim, true
		return r
	}

	var ports structs.AllocatedPorts
	if g.netErr != nil {
		r.exhausted = dimNetworkAsk
		return r
	}
	if g.netAsk != nil && len(g.netAsk.ReservedPorts)+len(g.netAsk.DynamicPorts) > 0 {
		idx, err := structs.NewNetworkIndex(node)
		if err != nil {
			r.exhausted = "network: " + err.Error()
			return r
		}
		if collide, reason := idx.AddAllocs(proposed); collide {
			r.exhausted = "network: " + reason
			return r
		}
		ports, err = idx.AssignPorts(g.netAsk, "", ctx.rng)
		if err != nil {
			var full *structs.DynamicPortsExhaustedError
			if errors.As(err, &full) {
				r.exhausted = dimDynamicPorts
			} else {
				r.exhausted = "network: " + err.Error()
			}
			return r
		}
	}
	r.resources = structs.AllocatedResourcesFor(g.tg, ports)
	if cfg := ctx.SchedulerConfig(); cfg == nil || !cfg.MemoryOversubscriptionEnabled {
		withoutMemoryMax(r.resources)
	}

	candidate := &structs.Allocation{
		ID:                 "proposed-placement",
		AllocatedResources: r.resources,
		DesiredStatus:      structs.AllocDesiredStatusRun,
		ClientStatus:       structs.AllocClientStatusPending,
	}
	all := make([]*structs.Allocation, len(proposed), len(proposed)+1)
	copy(all, proposed)
	fits, dim, _, err := structs.AllocsFit(node, append(all, candidate), nil)
	switch {
	case err != nil:
		r.exhausted = "network: " + err.Error()
	case !fits:
		r.exhausted = dim
	}
	return r
}

// withoutMemoryMax drops the tasks' memory_max from a grant when the
// cluster does not allow memory oversubscription, as Nomad does: the task
// is then limited to the memory it reserved, and its driver and
// environment never see memory_max. Fit checks count reserved memory only,
// so this changes no placement decision.
func withoutMemoryMax(ar *structs.AllocatedResources) {
	for _, t := range ar.Tasks {
		t.Memory.MemoryMaxMB = 0
	}
}
