package scheduler

import (
	"fmt"
	"math/rand"

	"github.com/drover-sched/drover/scheduler/feasible"
	"github.com/drover-sched/drover/scheduler/reconciler"
	"github.com/drover-sched/drover/structs"
	"github.com/hashicorp/go-hclog"
)

// genericScheduler runs service and batch jobs.
type genericScheduler struct {
	cfg    Config
	batch  bool
	logger hclog.Logger
}

// Process schedules one evaluation of a service or batch job.
func (s *genericScheduler) Process(eval *structs.Evaluation) error {
	limit := maxServiceAttempts
	if s.batch {
		limit = maxBatchAttempts
	}
	r := newRun(s.cfg, eval, s.logger)
	return r.loop(limit, s.attempt)
}

// attempt reconciles the job on the run's current snapshot, places what
// must be placed and submits the plan.
func (s *genericScheduler) attempt(r *run) (*attemptResult, error) {
	st := r.state
	view, err := readJob(st, r.eval)
	if err != nil {
		return nil, err
	}
	var deployment *structs.Deployment
	if !s.batch {
		if deployment, err = st.LatestDeploymentByJobID(nil, r.eval.Namespace, r.eval.JobID); err != nil {
			return nil, fmt.Errorf("reading the job's deployment: %w", err)
		}
	}
	res := reconciler.Reconcile(reconciler.Input{
		Job: view.job, Eval: r.eval, Allocs: view.allocs, Nodes: view.nodes, Evals: view.evals,
		Now: r.cfg.Now, NewID: r.ids.next, ReportWindow: r.cfg.ReconnectReportWindow,
		Deployment: deployment,
	})
	plan, b, err := r.newPlan(view.job)
	if err != nil {
		return nil, err
	}
	applyDecisions(b, res, view.nodes)
	plan.Deployment, plan.DeploymentUpdates = res.Deployment, res.DeploymentUpdates

	out := &attemptResult{res: res, plan: plan, queued: queuedZero(view.job)}
	if len(res.Places) > 0 {
		ctx := feasible.NewEvalContext(st, plan, r.rng, r.logger)
		stack := feasible.NewGenericStack(s.batch, ctx)
		nodes, _, err := feasible.ReadyNodesInDCsAndPool(st, view.job.Datacenters, view.job.NodePool)
		if err != nil {
			return nil, fmt.Errorf("listing ready nodes: %w", err)
		}
		stack.SetNodes(nodes)
		stack.SetJob(view.job)
		s.place(r, ctx, stack, view.job, b, res.Places, out)
		out.classEligibility, out.escaped = ctx.ClassEligibility(), ctx.EscapedComputedClass()
	}
	return r.submit(out)
}

// place finds a node for every placement. The first failure of a group is
// recorded with its metrics; later placements of the same group are not
// tried (they would fail the same way) but counted as coalesced failures
// and queued.
func (s *genericScheduler) place(r *run, ctx *feasible.EvalContext, stack feasible.Stack, job *structs.Job,
	b *planBuilder, places []reconciler.Placement, out *attemptResult) {
	for _, p := range places {
		tg := p.TaskGroup
		if m := out.failed[tg.Name]; m != nil {
			m.CoalescedFailures++
			out.queued[tg.Name]++
			continue
		}
		opts := &feasible.SelectOptions{AllocName: p.Name}
		if len(p.PenaltyNodes) > 0 {
			opts.PenaltyNodeIDs = map[string]struct{}{}
			for _, id := range p.PenaltyNodes {
				opts.PenaltyNodeIDs[id] = struct{}{}
			}
		}
		if p.Previous != nil && tg.EphemeralDisk != nil && tg.EphemeralDisk.Sticky {
			if n, err := ctx.State().NodeByID(nil, p.Previous.NodeID); err == nil && n != nil && n.Ready() {
				opts.PreferredNodes = []*structs.Node{n}
			}
		}
		option := stack.Select(tg, opts)
		if option == nil {
			out.fail(tg.Name, ctx.Metrics())
			continue
		}
		a := r.newAlloc(job, p, option, ctx.Metrics())
		if id := out.res.DeploymentID; id != "" {
			a.DeploymentID = id
			if p.Canary {
				a.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
			}
		}
		b.place(a, p)
	}
}

// newAlloc builds the allocation for a placement on a chosen node.
func (r *run) newAlloc(job *structs.Job, p reconciler.Placement, option *feasible.RankedNode, metrics *structs.AllocMetric) *structs.Allocation {
	a := &structs.Allocation{
		ID:                 r.ids.next(),
		Namespace:          job.Namespace,
		EvalID:             r.eval.ID,
		Name:               p.Name,
		NodeID:             option.Node.ID,
		NodeName:           option.Node.Name,
		JobID:              job.ID,
		Job:                job,
		TaskGroup:          p.TaskGroup.Name,
		AllocatedResources: option.Resources,
		Metrics:            metrics,
		DesiredStatus:      structs.AllocDesiredStatusRun,
		ClientStatus:       structs.AllocClientStatusPending,
		RescheduleTracker:  p.RescheduleTracker,
		CreateTime:         r.cfg.Now.UnixNano(),
		ModifyTime:         r.cfg.Now.UnixNano(),
	}
	if p.Previous != nil {
		a.PreviousAllocation = p.Previous.ID
	}
	return a
}

// newRNG returns the placement random source for seed.
func newRNG(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }
