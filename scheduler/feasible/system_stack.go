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
	sysbatch bool
	ctx      *EvalContext
	job      *structs.Job
	nodes    []*structs.Node
	groups   map[string]*groupInfo
}

// NewSystemStack returns a stack for system (sysbatch false) or sysbatch
// jobs.
func NewSystemStack(sysbatch bool, ctx *EvalContext) Stack {
	return &SystemStack{sysbatch: sysbatch, ctx: ctx, groups: map[string]*groupInfo{}}
}

// SetNodes sets the nodes to consider, in order.
func (s *SystemStack) SetNodes(nodes []*structs.Node) {
	s.nodes = nodes
}

// SetJob sets the job.
func (s *SystemStack) SetJob(job *structs.Job) {
	if s.job != job {
		s.ctx.classes.reset()
	}
	s.job = job
	s.groups = map[string]*groupInfo{}
}

// Select returns the first of the set nodes that can run one allocation of
// tg, or nil.
func (s *SystemStack) Select(tg *structs.TaskGroup, opts *SelectOptions) *RankedNode {
	s.ctx.Reset()
	if s.job == nil || tg == nil {
		return nil
	}
	if opts == nil {
		opts = &SelectOptions{}
	}
	s.ctx.metrics.NodesInPool = len(s.nodes)
	g := s.groups[tg.Name]
	if g == nil || g.tg != tg {
		g = newGroupInfo(s.ctx, s.job, tg)
		s.groups[tg.Name] = g
	}
	g.allocName = opts.AllocName
	tracker := s.ctx.jobTracker(s.job)
	tracker.sync(s.ctx.plan)
	if opts.InPlaceAllocID != "" {
		tracker.exclude(opts.InPlaceAllocID)
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
