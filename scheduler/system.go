package scheduler

import (
	"fmt"

	"github.com/drover-sched/drover/scheduler/feasible"
	"github.com/drover-sched/drover/scheduler/reconciler"
	"github.com/drover-sched/drover/structs"
	"github.com/hashicorp/go-hclog"
)

// systemScheduler runs system and sysbatch jobs: one allocation per task
// group on every ready, eligible node in the job's datacenters and pool
// that the job's constraints and resources fit.
type systemScheduler struct {
	cfg      Config
	sysbatch bool
	logger   hclog.Logger
}

// Process schedules one evaluation of a system or sysbatch job.
func (s *systemScheduler) Process(eval *structs.Evaluation) error {
	return newRun(s.cfg, eval, s.logger).loop(maxSystemAttempts, s.attempt)
}

func (s *systemScheduler) attempt(r *run) (*attemptResult, error) {
	st := r.state
	view, err := readJob(st, r.eval)
	if err != nil {
		return nil, err
	}
	eligible := map[string]*structs.Node{}
	if view.job != nil && !view.job.Stopped() {
		nodes, _, err := feasible.ReadyNodesInDCsAndPool(st, view.job.Datacenters, view.job.NodePool)
		if err != nil {
			return nil, fmt.Errorf("listing ready nodes: %w", err)
		}
		for _, n := range nodes {
			eligible[n.ID] = n
		}
	}
	res := reconciler.ReconcileSystem(reconciler.SystemInput{
		Job: view.job, Eval: r.eval, Allocs: view.allocs, Nodes: view.nodes, Eligible: eligible,
		InScope: func(n *structs.Node) bool { return inScope(view.job, n) },
		Evals:   view.evals, Now: r.cfg.Now, NewID: r.ids.next, ReportWindow: r.cfg.ReconnectReportWindow,
	})
	plan, b, err := r.newPlan(view.job)
	if err != nil {
		return nil, err
	}
	out := &attemptResult{res: res, plan: plan, queued: queuedZero(view.job)}
	if view.job == nil || view.job.Stopped() {
		applyDecisions(b, res, view.nodes)
		return r.submit(out)
	}

	ctx := feasible.NewEvalContext(st, plan, r.rng, r.logger)
	stack := feasible.NewSystemStack(s.sysbatch, ctx)
	stack.SetJob(view.job)
	// Kept allocs on nodes that changed since they were written are checked
	// again: a node whose attributes no longer match the job loses its alloc.
	res.Stops = append(res.Stops, s.noLongerMatching(r, stack, ctx, view.job, res.Keep, eligible)...)
	res.Updates = withoutStopped(res.Updates, res.Stops)
	applyDecisions(b, res, view.nodes)

	for _, p := range res.Places {
		node := eligible[p.NodeID]
		stack.SetNodes([]*structs.Node{node})
		option := stack.Select(p.TaskGroup, &feasible.SelectOptions{AllocName: p.Name})
		if option == nil {
			m := ctx.Metrics()
			if m.NodesExhausted > 0 {
				// The node matches but is full (perhaps of the version
				// being replaced, whose resources are held until it
				// stops): wait for capacity.
				out.fail(p.TaskGroup.Name, m)
			}
			// A node the job's constraints filter out simply does not
			// run the job.
			continue
		}
		b.place(r.newAlloc(view.job, p, option, ctx.Metrics()), p)
	}
	out.classEligibility, out.escaped = ctx.ClassEligibility(), ctx.EscapedComputedClass()
	return r.submit(out)
}

// noLongerMatching returns stops for kept allocs whose node was modified
// after the alloc was last written and no longer passes the job's
// feasibility checks. The check treats the alloc as the version being
// placed (InPlaceAllocID), so its own resources do not count against it;
// a node that is merely full keeps its alloc.
func (s *systemScheduler) noLongerMatching(r *run, stack feasible.Stack, ctx *feasible.EvalContext, job *structs.Job,
	keep []*structs.Allocation, eligible map[string]*structs.Node) []reconciler.Stop {
	var stops []reconciler.Stop
	for _, a := range keep {
		node := eligible[a.NodeID]
		if node == nil || a.TerminalStatus() || node.ModifyIndex <= a.AllocModifyIndex {
			continue
		}
		tg := job.LookupTaskGroup(a.TaskGroup)
		if tg == nil {
			continue
		}
		stack.SetNodes([]*structs.Node{node})
		if stack.Select(tg, &feasible.SelectOptions{AllocName: a.Name, InPlaceAllocID: a.ID}) == nil && ctx.Metrics().NodesFiltered > 0 {
			stops = append(stops, reconciler.Stop{Alloc: a, Description: reconciler.DescNodeNotEligible})
		}
	}
	return stops
}

// withoutStopped drops updates of allocs that are being stopped.
func withoutStopped(updates []reconciler.Update, stops []reconciler.Stop) []reconciler.Update {
	stopped := map[string]bool{}
	for _, s := range stops {
		stopped[s.Alloc.ID] = true
	}
	out := updates[:0:0]
	for _, u := range updates {
		if !stopped[u.Alloc.ID] {
			out = append(out, u)
		}
	}
	return out
}

// inScope reports whether node is in the job's datacenters and node pool,
// whatever its status: a system alloc on a node moved out of scope stops,
// one on a node that is only ineligible or draining stays.
func inScope(job *structs.Job, node *structs.Node) bool {
	if job == nil {
		return false
	}
	if job.NodePool != structs.AllNodePools && job.NodePool != "" && node.NodePool != job.NodePool {
		return false
	}
	return feasible.InDatacenters(node.Datacenter, job.Datacenters)
}
