package feasible

import (
	"github.com/drover-sched/drover/structs"
)

// fullNodes remembers, for one group, the nodes on which it did not fit on
// CPU, memory or disk, and what the plan held for each node then. Whether
// the group fits on those dimensions depends only on the node, the
// snapshot's allocations on it, the plan's entries for it and the group's
// ask; while the first three are unchanged the answer is the same, and
// the fit check (reading and summing the node's allocations) is skipped.
//
// This matters to spread: a value whose nodes are full of other work keeps
// the best spread score (the group has nothing there), so every Select
// offers its nodes first, and each used to cost a fit check. Port
// exhaustion is not remembered: choosing ports draws from the evaluation's
// rand, and skipping the draw would change later choices. A placement that
// updates an allocation in place (SelectOptions.InPlaceAllocID) frees that
// allocation's share, so it neither reads nor fills the memo.
type fullNodes struct {
	state State
	nodes map[string]fullMark
}

// fullMark is a remembered refusal: the dimension, and the plan's entries
// for the node (their number and last one) when it was made.
type fullMark struct {
	dim          string
	update, plac planMark
}

type planMark struct {
	n    int
	last *structs.Allocation
}

func markOf(list []*structs.Allocation) planMark {
	if len(list) == 0 {
		return planMark{}
	}
	return planMark{n: len(list), last: list[len(list)-1]}
}

func (f *fullNodes) marks(ctx *EvalContext, nodeID string) (update, plac planMark) {
	if p := ctx.plan; p != nil {
		return markOf(p.NodeUpdate[nodeID]), markOf(p.NodeAllocation[nodeID])
	}
	return planMark{}, planMark{}
}

// get returns the remembered dimension, or "" when the node must be
// checked.
func (f *fullNodes) get(ctx *EvalContext, nodeID string) string {
	if f.state != ctx.state {
		return ""
	}
	m, ok := f.nodes[nodeID]
	if !ok {
		return ""
	}
	if u, p := f.marks(ctx, nodeID); u != m.update || p != m.plac {
		delete(f.nodes, nodeID)
		return ""
	}
	return m.dim
}

func (f *fullNodes) put(ctx *EvalContext, nodeID, dim string) {
	if f.nodes == nil || f.state != ctx.state {
		f.state, f.nodes = ctx.state, map[string]fullMark{}
	}
	u, p := f.marks(ctx, nodeID)
	f.nodes[nodeID] = fullMark{dim: dim, update: u, plac: p}
}

// fit is fitGroup with the memo of full nodes (unless g.noMemo).
func (g *groupInfo) fit(ctx *EvalContext, node *structs.Node, replacing string) fitResult {
	memo := !g.noMemo && replacing == ""
	if memo {
		if dim := g.full.get(ctx, node.ID); dim != "" {
			return fitResult{exhausted: dim, remembered: true}
		}
	}
	r := fitGroup(ctx, g, node, replacing)
	if memo && r.beforePorts {
		g.full.put(ctx, node.ID, r.exhausted)
		r.remembered = true
	}
	return r
}
