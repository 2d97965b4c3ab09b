package planner

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/helper/telemetry"
	"github.com/drover-sched/drover/structs"
)

// Config is what the applier needs from the server and how it is tuned.
type Config struct {
	// State gives the snapshots plans are checked against.
	State StateSource
	// Raft commits the plan results.
	Raft Raft
	// Clock stamps each entry's UpdatedAt, since the FSM may not read the
	// clock (the real clock if nil). The timers below measure wall time.
	Clock clock.Clock
	// Logger receives refusals (debug) and failed commits (nil drops
	// them).
	Logger hclog.Logger
	// Metrics receives the applier's timers and counters (nil drops
	// them): nomad.nomad.plan.evaluate per check, .apply from a plan's
	// check to its answer, .node_rejected per refused node and
	// .allocs_placed per new allocation committed.
	Metrics *metrics.Metrics

	// Workers bounds the parallel node checks of one plan (1 if < 1).
	Workers int
	// GroupCommit takes every plan already waiting (up to MaxBatch) as one
	// batch and commits plans that touch disjoint allocs in one raft entry.
	GroupCommit bool
	// MaxBatch bounds a group-commit batch (64 if < 1).
	MaxBatch int
	// DisablePipelining waits for each commit before checking the next
	// plan. It exists to measure what pipelining buys.
	DisablePipelining bool
}

// Applier is the leader's single plan applier: it takes plans from the
// Queue one batch at a time, re-checks them against the newest state
// (evaluate.go), commits what fits through raft, and answers each plan's
// future.
//
// Pipelining: after a batch is submitted to raft, the applier does not wait
// for it. It takes the next batch and checks it against a fresh snapshot
// with the in-flight batch laid over it (optimisticView), and only then
// waits for the in-flight commit before submitting. Checking and committing
// thus overlap, and the single applier still decides everything in order,
// so two plans can never both take the same capacity. If the in-flight
// commit failed, the next batch was checked against a state that never
// happened, so it is checked again against a fresh snapshot.
//
// Group commit: with GroupCommit, all plans waiting in the queue form a
// batch. They are checked one after another, each against the view with
// the earlier ones applied, exactly as if they had come one at a time, and
// plans touching disjoint allocs are merged into one ApplyPlanResultsRequest
// (one raft entry, one fsync). A merged entry has Job nil and the first
// plan's EvalID; every alloc carries its own Job, so the state store needs
// nothing else. At most one plan with deployment changes goes into an
// entry. If a merged entry fails, its plans are retried one at a time so
// that one bad plan cannot fail the others.
//
// Answers: every plan of a batch is answered when the batch's commits have
// finished, with AllocIndex = the index of its entry and, if some node was
// refused, RefreshIndex = an index that includes both what the check saw
// and every commit of the batch, so the worker's refreshed snapshot shows
// why its plan did not fit.
type Applier struct {
	queue *Queue
	cfg   Config

	lastIndex uint64 // highest raft index this applier committed; owned by Run
}

// NewApplier returns an applier of queue's plans; the leader runs it with
// Run.
func NewApplier(queue *Queue, cfg Config) *Applier {
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	if cfg.MaxBatch < 1 {
		cfg.MaxBatch = 64
	}
	if !cfg.GroupCommit {
		cfg.MaxBatch = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	cfg.Clock = clock.OrReal(cfg.Clock)
	cfg.Metrics = telemetry.OrDiscard(cfg.Metrics)
	return &Applier{queue: queue, cfg: cfg}
}

// checkedPlan is one plan of a batch with the outcome of its check.
type checkedPlan struct {
	pending   *pendingPlan
	result    *structs.PlanResult
	err       error
	viewIndex uint64    // index of the snapshot the check read
	checked   time.Time // when its check began, for nomad.nomad.plan.apply
}

// commitGroup is the one raft entry of a batch.
type commitGroup struct {
	plans  []*checkedPlan
	req    *structs.ApplyPlanResultsRequest
	future RaftFuture
	err    error
}

// planBatch is what the applier checks and commits at once: every plan of
// it is answered together, and those with something to commit share one
// raft entry (group, nil if none has).
type planBatch struct {
	plans []*checkedPlan
	group *commitGroup
}

// Run applies plans until ctx is done or the queue is disabled. The leader
// enables the queue first and runs this on one goroutine it waits for.
// Every plan taken from the queue is answered, even on the way out.
func (p *Applier) Run(ctx context.Context) {
	var inflight *planBatch
	var carry []*pendingPlan // taken from the queue, not yet in a batch
	defer func() {
		if inflight != nil {
			p.finish(ctx, inflight)
		}
	}()
	for {
		pending := carry
		carry = nil
		switch {
		case len(pending) > 0:
			pending = append(pending, p.queue.tryDequeue(p.cfg.MaxBatch-len(pending))...)
		case inflight != nil:
			pending = p.queue.tryDequeue(p.cfg.MaxBatch)
			if len(pending) == 0 {
				// Nothing to overlap with: answer the in-flight batch.
				p.finish(ctx, inflight)
				inflight = nil
				continue
			}
		default:
			first, err := p.queue.dequeue(ctx)
			if err != nil {
				return
			}
			pending = append([]*pendingPlan{first}, p.queue.tryDequeue(p.cfg.MaxBatch-1)...)
		}

		batch, rest, err := p.check(ctx, pending, inflight)
		if inflight != nil {
			ok := p.finish(ctx, inflight)
			inflight = nil
			if !ok && err == nil {
				batch, rest, err = p.check(ctx, pending, nil)
			}
		}
		if err != nil {
			p.cfg.Logger.Error("failed to check plans", "count", len(pending), "error", err)
			for _, pp := range pending {
				pp.respond(nil, err)
			}
			continue
		}
		carry = rest
		p.submit(batch)
		if p.cfg.DisablePipelining {
			p.finish(ctx, batch)
		} else {
			inflight = batch
		}
	}
}

// check takes a snapshot at least as new as the last commit, lays the
// in-flight batch over it, and checks pending in order, each plan against
// the view with the earlier ones applied. It stops at the first plan that
// cannot share the batch's raft entry and returns it and those after it,
// unchecked, for the next batch.
func (p *Applier) check(ctx context.Context, pending []*pendingPlan, inflight *planBatch) (*planBatch, []*pendingPlan, error) {
	snap, err := p.cfg.State.SnapshotMinIndex(ctx, p.lastIndex)
	if err != nil {
		return nil, nil, fmt.Errorf("plan applier: snapshot at index %d: %w", p.lastIndex, err)
	}
	snapIndex, err := snap.LatestIndex()
	if err != nil {
		return nil, nil, err
	}
	view := newOptimisticView(snap)
	if inflight != nil {
		for _, cp := range inflight.plans {
			if cp.err == nil && cp.result != nil {
				if err := view.apply(cp.result); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	batch := &planBatch{}
	var merge mergeState
	var rest []*pendingPlan
	for i, pp := range pending {
		cp := &checkedPlan{pending: pp, viewIndex: snapIndex, checked: time.Now()}
		var reasons map[string]string
		cp.result, reasons, cp.err = evaluatePlan(view, pp.plan, p.cfg.Workers)
		p.cfg.Metrics.MeasureSince(keyPlanEvaluate, cp.checked)
		if cp.err == nil && hasCommit(cp.result) {
			if batch.group != nil && !merge.accepts(cp) {
				rest = pending[i:]
				break
			}
			if batch.group == nil {
				batch.group = &commitGroup{}
			}
			merge.add(cp)
			batch.group.plans = append(batch.group.plans, cp)
		}
		if cp.err == nil {
			if len(reasons) > 0 {
				p.cfg.Logger.Debug("plan partly refused", "eval_id", pp.plan.EvalID, "refused", reasons, "all_at_once", pp.plan.AllAtOnce)
			}
			if err := view.apply(cp.result); err != nil {
				return nil, nil, err
			}
		}
		batch.plans = append(batch.plans, cp)
	}
	if batch.group != nil {
		batch.group.req = commitRequest(batch.group.plans)
	}
	return batch, rest, nil
}

// submit hands the batch's raft entry to raft without waiting.
func (p *Applier) submit(batch *planBatch) {
	if g := batch.group; g != nil {
		g.req.UpdatedAt = p.cfg.Clock.Now().UnixNano()
		g.future, g.err = p.cfg.Raft.ApplyPlanResults(g.req)
	}
}

// finish waits for the batch's commit and answers its plans. It reports
// whether the commit succeeded.
func (p *Applier) finish(ctx context.Context, batch *planBatch) bool {
	ok := true
	var commitIndex uint64
	if g := batch.group; g != nil {
		if g.err == nil {
			g.err = g.future.Error()
		}
		switch {
		case g.err == nil:
			commitIndex = g.future.Index()
			p.lastIndex = max(p.lastIndex, commitIndex)
			for _, cp := range g.plans {
				cp.result.AllocIndex = commitIndex
			}
		case len(g.plans) == 1:
			ok = false
			p.cfg.Logger.Error("failed to commit plan", "eval_id", g.plans[0].pending.plan.EvalID, "error", g.err)
			g.plans[0].err = g.err
		default:
			ok = false
			p.cfg.Logger.Warn("merged plan commit failed, retrying its plans one at a time", "plans", len(g.plans), "error", g.err)
			for _, cp := range g.plans {
				cp.result, cp.err = p.applyAlone(ctx, cp.pending)
				if cp.err == nil {
					commitIndex = max(commitIndex, cp.result.AllocIndex)
				}
			}
		}
	}
	for _, cp := range batch.plans {
		if cp.err != nil {
			cp.pending.respond(nil, cp.err)
			continue
		}
		if len(cp.result.RejectedNodes) > 0 {
			cp.result.RefreshIndex = max(cp.viewIndex, commitIndex, p.lastIndex)
		}
		p.record(cp)
		cp.pending.respond(cp.result, nil)
	}
	return ok
}

// record counts what one answered plan did: its time in the applier, the
// nodes refused, and the new allocations it committed (a new allocation
// has no CreateIndex yet; an in-place update keeps its own).
func (p *Applier) record(cp *checkedPlan) {
	m := p.cfg.Metrics
	m.MeasureSince(keyPlanApply, cp.checked)
	for _, nodeID := range cp.result.RejectedNodes {
		m.IncrCounterWithLabels(keyPlanNodeRejected, 1, []metrics.Label{{Name: "node_id", Value: nodeID}})
	}
	placed := 0
	for _, allocs := range cp.result.NodeAllocation {
		for _, a := range allocs {
			if a.CreateIndex == 0 {
				placed++
			}
		}
	}
	if placed > 0 {
		m.IncrCounter(keyPlanPlaced, float32(placed))
	}
}

// applyAlone checks one plan against a fresh snapshot and commits it by
// itself, waiting for the commit.
func (p *Applier) applyAlone(ctx context.Context, pp *pendingPlan) (*structs.PlanResult, error) {
	batch, _, err := p.check(ctx, []*pendingPlan{pp}, nil)
	if err != nil {
		return nil, err
	}
	cp := batch.plans[0]
	if cp.err != nil || batch.group == nil {
		return cp.result, cp.err
	}
	p.submit(batch)
	g := batch.group
	if g.err == nil {
		g.err = g.future.Error()
	}
	if g.err != nil {
		return nil, g.err
	}
	cp.result.AllocIndex = g.future.Index()
	p.lastIndex = max(p.lastIndex, cp.result.AllocIndex)
	if len(cp.result.RejectedNodes) > 0 {
		cp.result.RefreshIndex = max(cp.viewIndex, p.lastIndex)
	}
	return cp.result, nil
}

// hasCommit reports whether a checked plan needs a raft entry.
func hasCommit(r *structs.PlanResult) bool {
	return len(r.NodeUpdate) > 0 || len(r.NodeAllocation) > 0 || len(r.NodePreemptions) > 0 ||
		r.Deployment != nil || len(r.DeploymentUpdates) > 0
}

// mergeState tracks what the batch's raft entry already holds.
type mergeState struct {
	allocs        map[string]struct{}
	hasDeployment bool
	// size estimates the entry's encoded size: a merged entry carries
	// the job with every placement, so it must stay well below the RPC
	// message limit (see mergeBudget).
	size     int
	jobSizes map[*structs.Job]int
}

// mergeBudget bounds the estimated size of a merged plan entry, and
// allocEstimate is what one allocation without its job is counted as
// (about 1.6 KB measured for a one-task group; generous for more tasks).
// A plan that would take the entry past the budget gets an entry of its
// own, where its job travels once.
const (
	mergeBudget   = rpcx.DefaultMaxMessageSize / 4
	allocEstimate = 4 << 10
)

// estimate is the share of a merged entry cp would take.
func (m *mergeState) estimate(cp *checkedPlan) int {
	r := cp.result
	n := 0
	for _, mm := range []map[string][]*structs.Allocation{r.NodeUpdate, r.NodePreemptions} {
		for _, allocs := range mm {
			n += len(allocs) * allocEstimate
		}
	}
	job := cp.pending.plan.Job
	jobSize, ok := m.jobSizes[job]
	if !ok && job != nil {
		if buf, err := rpcx.Encode(job); err == nil {
			jobSize = len(buf)
		} else {
			jobSize = mergeBudget
		}
		if m.jobSizes == nil {
			m.jobSizes = map[*structs.Job]int{}
		}
		m.jobSizes[job] = jobSize
	}
	for _, allocs := range r.NodeAllocation {
		n += len(allocs) * (allocEstimate + jobSize)
	}
	return n
}

// accepts reports whether cp may join the entry: it touches no alloc the
// entry touches (the store applies all stops before all updates, which is
// only the same as one plan after another when the plans are disjoint), and
// the entry has room for its deployment changes.
func (m *mergeState) accepts(cp *checkedPlan) bool {
	r := cp.result
	if m.hasDeployment && (r.Deployment != nil || len(r.DeploymentUpdates) > 0) {
		return false
	}
	if m.size+m.estimate(cp) > mergeBudget {
		return false
	}
	for _, mm := range []map[string][]*structs.Allocation{r.NodeUpdate, r.NodeAllocation, r.NodePreemptions} {
		for _, allocs := range mm {
			for _, a := range allocs {
				if _, ok := m.allocs[a.ID]; ok {
					return false
				}
			}
		}
	}
	return true
}

func (m *mergeState) add(cp *checkedPlan) {
	if m.allocs == nil {
		m.allocs = map[string]struct{}{}
	}
	r := cp.result
	m.size += m.estimate(cp)
	if r.Deployment != nil || len(r.DeploymentUpdates) > 0 {
		m.hasDeployment = true
	}
	for _, mm := range []map[string][]*structs.Allocation{r.NodeUpdate, r.NodeAllocation, r.NodePreemptions} {
		for _, allocs := range mm {
			for _, a := range allocs {
				m.allocs[a.ID] = struct{}{}
			}
		}
	}
}

// commitRequest builds the raft entry for the plans of a group, in plan
// order and node order, so the entry is the same on every run.
func commitRequest(plans []*checkedPlan) *structs.ApplyPlanResultsRequest {
	first := plans[0].pending.plan
	req := &structs.ApplyPlanResultsRequest{EvalID: first.EvalID}
	if len(plans) == 1 {
		// The entry carries the job once; the state store gives it to
		// every alloc that has none.
		req.Job = first.Job
	}
	for _, cp := range plans {
		plan, r := cp.pending.plan, cp.result
		if r.Deployment != nil || len(r.DeploymentUpdates) > 0 {
			req.Deployment, req.DeploymentUpdates = r.Deployment, r.DeploymentUpdates
		}
		for _, nodeID := range slices.Sorted(maps.Keys(r.NodeUpdate)) {
			req.AllocsStopped = append(req.AllocsStopped, r.NodeUpdate[nodeID]...)
		}
		for _, nodeID := range slices.Sorted(maps.Keys(r.NodePreemptions)) {
			for _, a := range r.NodePreemptions[nodeID] {
				if a.DesiredStatus != structs.AllocDesiredStatusEvict {
					c := *a
					c.DesiredStatus = structs.AllocDesiredStatusEvict
					a = &c
				}
				req.AllocsStopped = append(req.AllocsStopped, a)
			}
		}
		for _, nodeID := range slices.Sorted(maps.Keys(r.NodeAllocation)) {
			for _, a := range r.NodeAllocation[nodeID] {
				switch {
				case len(plans) > 1 && a.Job == nil && plan.Job != nil:
					// A merged entry has no Job to default from.
					c := *a
					c.Job = plan.Job
					a = &c
				case len(plans) == 1 && a.Job != nil && a.Job == req.Job:
					c := *a
					c.Job = nil
					a = &c
				}
				req.AllocsUpdated = append(req.AllocsUpdated, a)
			}
		}
	}
	return req
}
