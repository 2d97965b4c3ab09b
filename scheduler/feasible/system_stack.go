package feasible

import (
	"github.com/drover-sched/drover/structs"
)

// SystemStack places system and sysbatch allocations. The scheduler decides
// which node each placement is for and sets exactly that node (or those
// nodes); the stack checks feasibility and fit there, without shuffling or
// sampling, and returns the first node, in the given order, that fits. The
// binpack score is computed only so metrics show it.
type SystemStack struct {
	stackJob
	sysbatch bool
}

// NewSystemStack returns a stack for system (sysbatch false) or sysbatch
// jobs.
func NewSystemStack(sysbatch bool, ctx *EvalContext) Stack {
	return &SystemStack{stackJob: stackJob{ctx: ctx, groups: map[string]*groupInfo{}}, sysbatch: sysbatch}
}

// SetNodes sets the nodes to consider, in order.
func (s *SystemStack) SetNodes(nodes []*structs.Node) {
	s.nodes = nodes
}

// Select returns the first of the set nodes that can run one allocation of
// tg, or nil.
func (s *SystemStack) Select(tg *structs.TaskGroup, opts *SelectOptions) *RankedNode {
	g, opts, tracker := s.start(tg, opts, false)
	if g == nil {
		return nil
	}
	if opts.InPlaceAllocID != "" {
		defer tracker.exclude("")
	}
	sel := newSelection(s.ctx, s.job, g, opts, tracker)
	for _, node := range s.nodes {
		if option := sel.rank(node, nil, false); option != nil {
			sel.keep(option)
			return sel.finish()
		}
	}
	return sel.finish()
}
