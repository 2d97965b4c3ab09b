package feasible

import "github.com/drover-sched/drover/structs"

// stackJob is what the generic and the system stack share: the job being
// placed, its per-group data, the candidate nodes, and how a Select
// starts. The stacks differ in how they pick among the nodes.
type stackJob struct {
	ctx    *EvalContext
	job    *structs.Job
	nodes  []*structs.Node
	groups map[string]*groupInfo
}

// SetJob sets the job; per-group data and class verdicts start over.
func (s *stackJob) SetJob(job *structs.Job) {
	if s.job != job {
		s.ctx.classes.reset()
	}
	s.job = job
	s.groups = map[string]*groupInfo{}
}

// start begins a Select of tg: fresh metrics, tg's group data (made anew,
// with noMemo, for a group the stack has not seen in this version), and
// the job's tracker synced with the plan, with opts' in-place allocation
// left out. It returns a nil group when there is nothing to place, and
// opts, defaulted. When opts.InPlaceAllocID is set, the caller defers
// tracker.exclude("") to count that allocation again once it is done.
func (s *stackJob) start(tg *structs.TaskGroup, opts *SelectOptions, noMemo bool) (*groupInfo, *SelectOptions, *jobTracker) {
	s.ctx.Reset()
	if s.job == nil || tg == nil {
		return nil, opts, nil
	}
	if opts == nil {
		opts = &SelectOptions{}
	}
	s.ctx.metrics.NodesInPool = len(s.nodes)
	g := s.groups[tg.Name]
	if g == nil || g.tg != tg {
		g = newGroupInfo(s.ctx, s.job, tg)
		g.noMemo = noMemo
		s.groups[tg.Name] = g
	}
	g.allocName = opts.AllocName
	tracker := s.ctx.jobTracker(s.job)
	tracker.sync(s.ctx.plan)
	if opts.InPlaceAllocID != "" {
		tracker.exclude(opts.InPlaceAllocID)
	}
	return g, opts, tracker
}
