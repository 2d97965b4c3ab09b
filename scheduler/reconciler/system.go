package reconciler

import (
	"time"

	"github.com/drover-sched/drover/structs"
)

// SystemInput is what ReconcileSystem looks at: like Input, plus the nodes
// the job should run on.
type SystemInput struct {
	Job    *structs.Job
	Eval   *structs.Evaluation
	Allocs []*structs.Allocation
	// Nodes holds every node an alloc is on; missing means gone.
	Nodes map[string]*structs.Node
	// Eligible are the nodes new allocs may go on: ready, eligible, not
	// draining, in the job's datacenters and node pool. Whether the job's
	// constraints and resources fit is the caller's (feasibility) check.
	Eligible map[string]*structs.Node
	// InScope reports whether a node is still in the job's datacenters and
	// node pool; an alloc on a ready node out of scope is stopped, while an
	// alloc on a node that is merely ineligible or draining stays.
	InScope func(*structs.Node) bool
	Evals   []*structs.Evaluation
	Now     time.Time
	NewID   func() string
	// ReportWindow is as in Input.
	ReportWindow time.Duration
}

// ReconcileSystem decides what should happen to a system or sysbatch job's
// allocations: one per eligible node and group. A system alloc is never
// moved to another node: a lost one is not replaced, a disconnected one is
// marked unknown and waits, and a failed one is replaced on its own node.
// A sysbatch alloc that finished (complete or failed) on a node is not run
// there again until the job changes.
func ReconcileSystem(in SystemInput) *Result {
	sysbatch := in.Job != nil && in.Job.Type == structs.JobTypeSysBatch
	classifier := newClassifier(in.Job, sysbatch, in.Eval, in.Now, in.ReportWindow)
	pending := pendingEvals(in.Evals)
	byGroup := map[string][]*structs.Allocation{}
	for _, a := range in.Allocs {
		byGroup[a.TaskGroup] = append(byGroup[a.TaskGroup], a)
	}
	stopped := in.Job == nil || in.Job.Stopped()
	var plans []*groupPlan
	for _, name := range groupNames(in.Job, byGroup) {
		tg := in.Job.LookupTaskGroup(name)
		switch {
		case stopped:
			plans = append(plans, planStopAll(name, byGroup[name], in.Nodes, classifier, DescJobStopped))
		case tg == nil:
			plans = append(plans, planStopAll(name, byGroup[name], in.Nodes, classifier, DescGroupRemoved))
		default:
			plans = append(plans, planSystemGroup(in, tg, byGroup[name], classifier, sysbatch))
		}
	}
	res := &Result{DesiredTGUpdates: map[string]*structs.DesiredUpdates{}, Buckets: map[string]*Buckets{}}
	res.Followups = makeAllFollowups(Input{Job: in.Job, Eval: in.Eval, Evals: in.Evals, Now: in.Now, NewID: in.NewID}, plans)
	for _, gp := range plans {
		emit(res, gp)
	}
	res.Cancel = cancelTimeouts(Input{Eval: in.Eval, Allocs: in.Allocs, Now: in.Now}, plans, pending)
	return res
}

// planSystemGroup decides one group of a system job, node by node.
func planSystemGroup(in SystemInput, tg *structs.TaskGroup, allocs []*structs.Allocation, c Classifier, sysbatch bool) *groupPlan {
	b := SortInto(allocs, in.Nodes, c)
	gp := &groupPlan{name: tg.Name, buckets: b, decisions: newDecisions()}
	d := gp.decisions
	// held marks the nodes that already have this group's alloc.
	held := map[string]bool{}
	var running []*structs.Allocation
	keep := func(a *structs.Allocation, runs bool) {
		if held[a.NodeID] && !a.TerminalStatus() {
			d.stop(a, DescScaleDown, false) // a duplicate on the node
			return
		}
		held[a.NodeID] = true
		gp.kept = append(gp.kept, a)
		if runs {
			running = append(running, a)
		}
	}

	// A reconnect is recorded on the alloc, which is then decided like any
	// alloc of its status on a ready node: a running one is kept (unless its
	// node left the job's scope), a finished sysbatch one holds its node,
	// and a failed system one is replaced on its node below. Every decision
	// carries the record (d.current).
	var failed []*structs.Allocation
	for _, r := range b.Reconnecting {
		gp.reconnected = append(gp.reconnected, r)
		d.rewrite(r, UpdateReconnect, func(x *structs.Allocation) {
			x.AppendState(structs.AllocStateFieldClientStatus, r.ClientStatus, in.Now)
		})
		switch {
		case !r.ClientTerminalStatus():
			if outOfScope(in, r) {
				d.stop(r, DescNodeNotEligible, false)
				continue
			}
			keep(d.current(r), true)
		case sysbatch && sameVersion(r.Job, in.Job):
			held[r.NodeID] = true // finished here; not run again
		case r.ClientStatus == structs.AllocClientStatusFailed:
			failed = append(failed, r)
		}
	}
	for _, a := range b.Untainted {
		if a.ClientStatus != structs.AllocClientStatusComplete && outOfScope(in, a) {
			d.stop(a, DescNodeNotEligible, false)
			continue
		}
		keep(a, a.ClientStatus != structs.AllocClientStatusComplete)
	}
	for _, a := range b.Migrate {
		node := in.Nodes[a.NodeID]
		if a.DesiredTransition.ShouldMigrate() || drainDeadlinePassed(node, in.Now) {
			d.stop(a, DescMigrating, false)
			continue
		}
		keep(a, true) // the drainer decides when system allocs go
	}
	for _, a := range b.Failed {
		if sysbatch && sameVersion(a.Job, in.Job) {
			held[a.NodeID] = true
		}
		// A failed system alloc is replaced on its node below, linked to it.
	}
	for _, k := range []Bucket{Lost, Expired} {
		for _, a := range b.Get(k) {
			d.stop(a, lostDescription(k, in.Nodes[a.NodeID]), true)
		}
	}
	for _, a := range b.Disconnecting {
		d.markUnknown(a, expiryOf(a, in.Now))
		keep(a, false)
	}
	for _, a := range b.Unknown {
		keep(a, false)
	}
	for _, a := range b.Ignore {
		if awaitingReport(a) {
			keep(a, false)
		}
	}

	// One alloc on every eligible node that has none; a failed one on the
	// node is the previous alloc of the new one.
	failedOn := map[string]*structs.Allocation{}
	for _, a := range append(append([]*structs.Allocation(nil), b.Failed...), failed...) {
		if !sysbatch && !d.stopped(a) {
			failedOn[a.NodeID] = d.current(a)
		}
	}
	for _, id := range sortedKeys(in.Eligible) {
		if held[id] {
			continue
		}
		p := Placement{Name: allocName(in.Job, tg.Name, 0), TaskGroup: tg, Reason: PlaceNew, NodeID: id}
		if f := failedOn[id]; f != nil {
			p.Reason = PlaceReschedule
			p.Previous = f
			p.StopPrevious = &Stop{Alloc: f, Description: DescRescheduled}
		}
		gp.places = append(gp.places, p)
	}

	gp.planSystemUpdates(in, tg, running, sysbatch)
	gp.awaiting = awaitingDue(b.Ignore, in.Nodes, c, d)
	kept := gp.kept[:0]
	for _, a := range gp.kept {
		if !d.stopped(a) {
			kept = append(kept, d.current(a))
		}
	}
	gp.kept = kept
	return gp
}

// outOfScope reports whether a's node, ready but not eligible for new
// allocs, has left the job's datacenters or node pool: its alloc stops. An
// alloc on a node that is merely ineligible or draining stays.
func outOfScope(in SystemInput, a *structs.Allocation) bool {
	node := in.Nodes[a.NodeID]
	_, eligible := in.Eligible[a.NodeID]
	return !eligible && node != nil && in.InScope != nil && !in.InScope(node)
}

// planSystemUpdates moves running allocs of older job versions to the
// current one. A destructive update stops the old alloc and places the new
// one on the same node in one plan: the old one keeps its resources until
// its client stops it (promise 1), so the new one may wait (blocked) until
// then. At most update.max_parallel are replaced per evaluation.
func (gp *groupPlan) planSystemUpdates(in SystemInput, tg *structs.TaskGroup, running []*structs.Allocation, sysbatch bool) {
	d := gp.decisions
	var candidates []*structs.Allocation
	compare := comparer(in.Job, tg.Name)
	for _, a := range running {
		if d.stopped(a) {
			continue
		}
		a = d.current(a)
		switch compare(a.Job) {
		case inPlace:
			d.rewrite(a, UpdateInPlace, func(x *structs.Allocation) { x.Job = in.Job })
		case destructive:
			if _, ok := in.Eligible[a.NodeID]; ok {
				candidates = append(candidates, a)
			}
		}
	}
	limit := len(candidates)
	if u := tg.Update; !sysbatch && u.Rolling() && u.MaxParallel < limit {
		limit = u.MaxParallel
		gp.rollingWait = max(u.Stagger, time.Second)
		gp.deferred = len(candidates) - limit
	}
	for _, a := range candidates[:limit] {
		d.stop(a, DescUpdated, false)
		gp.places = append(gp.places, Placement{
			Name: a.Name, TaskGroup: tg, Reason: PlaceDestructive, Previous: a, NodeID: a.NodeID,
		})
	}
}
