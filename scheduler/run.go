package scheduler

import (
	"fmt"
	"math/rand"
	"time"

	"github.com/drover-sched/drover/scheduler/reconciler"
	"github.com/drover-sched/drover/structs"
	"github.com/hashicorp/go-hclog"
)

// planRetryWait is how long the follow-up of an eval that ran out of plan
// attempts waits: long enough for the contention that refused its plans to
// pass.
const planRetryWait = 5 * time.Second

// run is one Process call: the eval, its random sources and the snapshot
// it currently works on (replaced when a plan is refused).
type run struct {
	cfg    Config
	eval   *structs.Evaluation
	logger hclog.Logger
	state  State
	rng    *rand.Rand
	ids    *idGenerator
}

func newRun(cfg Config, eval *structs.Evaluation, logger hclog.Logger) *run {
	index, _ := cfg.State.LatestIndex() // zero on error: the eval ID still seeds, and next checks every ID
	seed := seedFor(cfg.Seed, eval.ID, index)
	r := &run{
		cfg: cfg, eval: eval, state: cfg.State,
		logger: logger.With("eval_id", eval.ID, "job_id", eval.JobID),
		rng:    newRNG(seed),
	}
	r.ids = newIDGenerator(seed, r.idTaken)
	return r
}

// idTaken reports whether the run's current state holds an alloc, eval or
// deployment with id. A read that fails says no: next must not loop on a
// state it cannot read, and the plan applier checks what it writes.
func (r *run) idTaken(id string) bool {
	if a, err := r.state.AllocByID(nil, id); err == nil && a != nil {
		return true
	}
	if e, err := r.state.EvalByID(nil, id); err == nil && e != nil {
		return true
	}
	d, err := r.state.DeploymentByID(nil, id)
	return err == nil && d != nil
}

// attemptResult is what one attempt decided and how its plan fared.
type attemptResult struct {
	res  *reconciler.Result
	plan *structs.Plan
	// failed holds, per group, the metrics of its first failed placement.
	failed map[string]*structs.AllocMetric
	// queued counts, per group, placements that found no node.
	queued           map[string]int
	classEligibility map[string]bool
	escaped          bool
	// newState is set when the plan was refused: retry on it.
	newState State
}

// fail records a placement of group that found no node.
func (o *attemptResult) fail(group string, m *structs.AllocMetric) {
	if o.failed == nil {
		o.failed = map[string]*structs.AllocMetric{}
	}
	o.failed[group] = m
	o.queued[group]++
}

// loop runs attempts until one's plan is not refused, at most limit times.
func (r *run) loop(limit int, attempt func(*run) (*attemptResult, error)) error {
	for i := 0; i < limit; i++ {
		out, err := attempt(r)
		if err != nil {
			return fmt.Errorf("scheduler: eval %s: %w", structs.ShortID(r.eval.ID), err)
		}
		if out.newState == nil {
			return r.finish(out)
		}
		r.logger.Debug("plan refused in part, retrying on a refreshed snapshot", "attempt", i+1)
		r.state = out.newState
	}
	return r.failAfterAttempts(limit)
}

// jobView is what a scheduler reads about the eval's job.
type jobView struct {
	job    *structs.Job
	allocs []*structs.Allocation
	nodes  map[string]*structs.Node
	evals  []*structs.Evaluation
}

// readJob reads the job (nil if deleted), all its allocations, the nodes
// those are on, and its evaluations.
func readJob(st State, eval *structs.Evaluation) (*jobView, error) {
	job, err := st.JobByID(nil, eval.Namespace, eval.JobID)
	if err != nil {
		return nil, fmt.Errorf("reading job: %w", err)
	}
	allocs, err := st.AllocsByJob(nil, eval.Namespace, eval.JobID, true)
	if err != nil {
		return nil, fmt.Errorf("reading allocations: %w", err)
	}
	nodes := map[string]*structs.Node{}
	looked := map[string]bool{}
	for _, a := range allocs {
		if looked[a.NodeID] {
			continue
		}
		looked[a.NodeID] = true
		n, err := st.NodeByID(nil, a.NodeID)
		if err != nil {
			return nil, fmt.Errorf("reading node %s: %w", structs.ShortID(a.NodeID), err)
		}
		if n != nil { // a missing node is gone: the reconciler treats it as down
			nodes[a.NodeID] = n
		}
	}
	evals, err := st.EvalsByJob(nil, eval.Namespace, eval.JobID)
	if err != nil {
		return nil, fmt.Errorf("reading evaluations: %w", err)
	}
	return &jobView{job: job, allocs: allocs, nodes: nodes, evals: evals}, nil
}

// newPlan starts the attempt's plan.
func (r *run) newPlan(job *structs.Job) (*structs.Plan, *planBuilder, error) {
	plan := r.eval.MakePlan(job)
	idx, err := r.state.LatestIndex()
	if err != nil {
		return nil, nil, fmt.Errorf("reading state index: %w", err)
	}
	plan.SnapshotIndex = idx
	return plan, newPlanBuilder(plan, r.cfg.Now), nil
}

// applyDecisions writes the reconciler's stops, unknown marks and updates.
//
// An update (in place, reconnect record, follow-up link) of an alloc on a
// node that takes no new work (not ready, draining, ineligible) is left
// out: the plan applier checks every node with a non-stop change as if it
// were a placement and would refuse it, and the whole attempt with it. The
// alloc keeps its current version; a later evaluation tries again.
func applyDecisions(b *planBuilder, res *reconciler.Result, nodes map[string]*structs.Node) {
	for _, s := range res.Stops {
		b.stop(s)
	}
	for _, d := range res.Disconnects {
		b.disconnect(d)
	}
	for _, u := range res.Updates {
		if n := nodes[u.Alloc.NodeID]; n == nil || !n.Ready() {
			continue
		}
		b.update(u)
	}
}

// queuedZero returns a queued count of zero for every group of job.
func queuedZero(job *structs.Job) map[string]int {
	q := map[string]int{}
	if job != nil {
		for _, tg := range job.TaskGroups {
			q[tg.Name] = 0
		}
	}
	return q
}

// submit creates the follow-up evals the plan's allocs name, then submits
// the plan (unless it changes nothing and is no dry run).
func (r *run) submit(out *attemptResult) (*attemptResult, error) {
	if r.eval.AnnotatePlan {
		out.plan.Annotations = &structs.PlanAnnotations{DesiredTGUpdates: out.res.DesiredTGUpdates}
	}
	// Follow-ups first: a committed alloc must never name an eval that
	// does not exist. A retried attempt may leave an unused follow-up
	// behind; it runs as a no-op.
	for _, e := range out.res.Followups {
		if err := r.cfg.Planner.CreateEval(e); err != nil {
			return nil, fmt.Errorf("creating follow-up eval: %w", err)
		}
	}
	if out.plan.IsNoOp() && !r.eval.AnnotatePlan {
		return out, nil
	}
	_, newState, err := r.cfg.Planner.SubmitPlan(out.plan)
	if err != nil {
		return nil, fmt.Errorf("submitting plan: %w", err)
	}
	out.newState = newState
	return out, nil
}

// finish records the eval's outcome: canceled timeouts, then a blocked
// eval for what could not be placed (or the reblocked eval itself), then
// the eval's status.
func (r *run) finish(out *attemptResult) error {
	p := r.cfg.Planner
	r.cancel(out.res.Cancel)
	now := r.cfg.Now.UnixNano()
	if len(out.failed) > 0 && r.eval.Status == structs.EvalStatusBlocked {
		// A blocked eval that still cannot place goes back to waiting
		// rather than making another one.
		e := r.eval.Copy()
		e.ClassEligibility, e.EscapedComputedClass = out.classEligibility, out.escaped
		e.QueuedAllocations, e.FailedTGAllocs = out.queued, out.failed
		e.SnapshotIndex, e.ModifyTime = out.plan.SnapshotIndex, now
		if err := p.ReblockEval(e); err != nil {
			return fmt.Errorf("scheduler: reblocking eval: %w", err)
		}
		return nil
	}
	e := r.eval.Copy()
	e.Status, e.StatusDescription = structs.EvalStatusComplete, ""
	e.QueuedAllocations, e.FailedTGAllocs = out.queued, out.failed
	e.SnapshotIndex, e.ModifyTime = out.plan.SnapshotIndex, now
	for _, f := range out.res.Followups {
		if f.TriggeredBy == structs.EvalTriggerRollingUpdate {
			e.NextEval = f.ID
		}
	}
	if len(out.failed) > 0 {
		id, err := r.blockedEval(out)
		if err != nil {
			return err
		}
		e.BlockedEval = id
		e.StatusDescription = "some allocations could not be placed; blocked eval " + structs.ShortID(id) + " waits for capacity"
	}
	if err := p.UpdateEval(e); err != nil {
		return fmt.Errorf("scheduler: updating eval: %w", err)
	}
	return nil
}

// blockedEval returns the job's one blocked eval: the existing one if it
// was made for the same job version (its class eligibility still holds),
// else a new one, cancelling the outdated one.
func (r *run) blockedEval(out *attemptResult) (string, error) {
	p := r.cfg.Planner
	evals, err := r.state.EvalsByJob(nil, r.eval.Namespace, r.eval.JobID)
	if err != nil {
		return "", fmt.Errorf("scheduler: reading evals: %w", err)
	}
	var jobIndex uint64
	if out.plan.Job != nil {
		jobIndex = out.plan.Job.JobModifyIndex
	}
	for _, old := range evals {
		if old.Status != structs.EvalStatusBlocked || old.ID == r.eval.ID {
			continue
		}
		if old.JobModifyIndex == jobIndex {
			return old.ID, nil
		}
		c := old.Copy()
		c.Status, c.StatusDescription = structs.EvalStatusCancelled, "superseded by a blocked eval for a newer job version"
		c.ModifyTime = r.cfg.Now.UnixNano()
		r.cancel([]*structs.Evaluation{c})
	}
	b := r.eval.CreateBlockedEval(r.ids.next(), out.classEligibility, out.escaped, r.cfg.Now)
	b.JobModifyIndex = jobIndex
	b.QueuedAllocations = out.queued
	b.StatusDescription = "created to place remaining allocations"
	if err := p.CreateEval(b); err != nil {
		return "", fmt.Errorf("scheduler: creating blocked eval: %w", err)
	}
	return b.ID, nil
}

// cancel records evals of the job that are no longer needed as canceled.
// It is best effort: an eval left pending only runs as a no-op later, so a
// refused cancel is logged rather than failing this eval.
func (r *run) cancel(evals []*structs.Evaluation) {
	for _, c := range evals {
		if err := r.cfg.Planner.UpdateEval(c); err != nil {
			r.logger.Warn("could not cancel an eval that is no longer needed", "canceled_eval_id", c.ID, "error", err)
		}
	}
}

// failAfterAttempts fails the eval after its plans were refused limit
// times, with a follow-up eval that tries the job again shortly.
func (r *run) failAfterAttempts(limit int) error {
	f := r.eval.CreateFailedFollowUpEval(r.ids.next(), planRetryWait, r.cfg.Now)
	f.TriggeredBy = structs.EvalTriggerMaxPlans
	if err := r.cfg.Planner.CreateEval(f); err != nil {
		return fmt.Errorf("scheduler: creating follow-up eval: %w", err)
	}
	e := r.eval.Copy()
	e.Status = structs.EvalStatusFailed
	e.StatusDescription = fmt.Sprintf("plan refused %d times; follow-up eval %s retries", limit, structs.ShortID(f.ID))
	e.NextEval = f.ID
	e.ModifyTime = r.cfg.Now.UnixNano()
	if err := r.cfg.Planner.UpdateEval(e); err != nil {
		return fmt.Errorf("scheduler: updating eval: %w", err)
	}
	return nil
}
