package reconciler

import (
	"maps"
	"slices"
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
	plans := planGroups(in.Job, in.Allocs, in.Nodes, classifier, func(tg *structs.TaskGroup, allocs []*structs.Allocation) *groupPlan {
		return planSystemGroup(in, tg, allocs, classifier, sysbatch)
	})
	res := &Result{DesiredTGUpdates: map[string]*structs.DesiredUpdates{}, Buckets: map[string]*Buckets{}}
	res.Followups = makeAllFollowups(Input{Job: in.Job, Eval: in.Eval, Evals: in.Evals, Now: in.Now, NewID: in.NewID}, plans)
	for _, gp := range plans {
		emit(res, gp)
	}
	res.Cancel = cancelTimeouts(Input{Eval: in.Eval, Allocs: in.Allocs, Now: in.Now}, plans, pending)
	return res
}

// systemGroup is what deciding one group of a system job reads.
type systemGroup struct {
	in       SystemInput
	tg       *structs.TaskGroup
	sysbatch bool
}

// planSystemGroup decides one group of a system job, node by node, in the
// steps of README.md: sort, decide per bucket, place one alloc on every
// eligible node without one, update. As in planGroup, each step takes what
// it reads and records in decided; the steps that find allocs holding a
// node also record them in nodes, passed to each in turn, because the first
// alloc to claim a node keeps it and a later one there is a duplicate.
func planSystemGroup(in SystemInput, tg *structs.TaskGroup, allocs []*structs.Allocation, classifier Classifier, sysbatch bool) *groupPlan {
	sg := systemGroup{in: in, tg: tg, sysbatch: sysbatch}
	buckets := SortInto(allocs, in.Nodes, classifier)
	decided := newDecisions()
	nodes := newNodeClaims()

	reconnected, failedAway := sg.decideReconnecting(buckets.Reconnecting, nodes, decided)
	sg.decideUntainted(buckets.Untainted, nodes, decided)
	sg.decideMigrate(buckets.Migrate, nodes, decided)
	sg.decideFailed(buckets.Failed, nodes)
	sg.decideLost(buckets, decided)
	sg.decideUnknown(buckets, nodes, decided)

	places := sg.placeOnFreeNodes(nodes, concat(buckets.Failed, failedAway), decided)
	updates := sg.planUpdates(nodes.running, places, decided)
	return &groupPlan{
		name:        tg.Name,
		buckets:     buckets,
		decisions:   decided,
		places:      updates.places,
		reconnected: reconnected,
		rollingWait: updates.wait,
		deferred:    updates.deferred,
		kept:        nodes.keptAllocs(decided),
		awaiting:    awaitingDue(buckets.Ignore, in.Nodes, classifier, decided),
	}
}

// decideReconnecting records each reconnect; the alloc is then decided like
// any alloc of its status on a ready node: a running one is kept (unless
// its node left the job's scope), a finished sysbatch one holds its node,
// and a failed system one is returned, to be replaced on its node. Every
// decision carries the record (decided.current).
func (sg systemGroup) decideReconnecting(reconnecting AllocSet, nodes *nodeClaims, decided *decisions) (reconnected, failed []*structs.Allocation) {
	for _, a := range reconnecting {
		reconnected = append(reconnected, a)
		decided.rewrite(a, UpdateReconnect, func(c *structs.Allocation) {
			c.AppendState(structs.AllocStateFieldClientStatus, a.ClientStatus, sg.in.Now)
		})
		switch {
		case !a.ClientTerminalStatus():
			if outOfScope(sg.in, a) {
				decided.stop(a, DescNodeNotEligible, false)
				continue
			}
			nodes.claim(decided.current(a), true, decided)
		case sg.sysbatch && sameVersion(a.Job, sg.in.Job):
			nodes.finished(a) // finished here; not run again
		case a.ClientStatus == structs.AllocClientStatusFailed:
			failed = append(failed, a)
		}
	}
	return reconnected, failed
}

// decideUntainted keeps the Untainted allocs on their nodes, but stops a
// running one whose node left the job's scope.
func (sg systemGroup) decideUntainted(untainted AllocSet, nodes *nodeClaims, decided *decisions) {
	for _, a := range untainted {
		if a.ClientStatus != structs.AllocClientStatusComplete && outOfScope(sg.in, a) {
			decided.stop(a, DescNodeNotEligible, false)
			continue
		}
		nodes.claim(a, a.ClientStatus != structs.AllocClientStatusComplete, decided)
	}
}

// decideMigrate keeps the allocs of draining nodes until the drainer moves
// them (DesiredTransition.Migrate) or the drain deadline passes: a system
// alloc is stopped, never moved elsewhere. A drain that ignores system jobs
// leaves system allocs running past its deadline too.
func (sg systemGroup) decideMigrate(migrate AllocSet, nodes *nodeClaims, decided *decisions) {
	for _, a := range migrate {
		node := sg.in.Nodes[a.NodeID]
		ignored := !sg.sysbatch && node != nil && node.DrainStrategy != nil && node.DrainStrategy.IgnoreSystemJobs
		if a.DesiredTransition.ShouldMigrate() || (drainDeadlinePassed(node, sg.in.Now) && !ignored) {
			decided.stop(a, DescMigrating, false)
			continue
		}
		nodes.claim(a, true, decided) // the drainer decides when system allocs go
	}
}

// decideFailed lets a failed sysbatch alloc of the current version hold its
// node: it is not run there again. A failed system alloc is replaced on its
// node by placeOnFreeNodes, linked to it.
func (sg systemGroup) decideFailed(failed AllocSet, nodes *nodeClaims) {
	for _, a := range failed {
		if sg.sysbatch && sameVersion(a.Job, sg.in.Job) {
			nodes.finished(a)
		}
	}
}

// decideLost stops the allocs of the Lost and Expired buckets as lost; a
// system alloc is never moved to another node, so nothing replaces them.
func (sg systemGroup) decideLost(buckets *Buckets, decided *decisions) {
	for _, k := range []Bucket{Lost, Expired} {
		for _, a := range buckets.Get(k) {
			decided.stop(a, lostDescription(k, sg.in.Nodes[a.NodeID]), true)
		}
	}
}

// decideUnknown marks the Disconnecting allocs unknown; they, the Unknown
// ones and those of Ignore awaiting their client's report keep their nodes
// and wait.
func (sg systemGroup) decideUnknown(buckets *Buckets, nodes *nodeClaims, decided *decisions) {
	for _, a := range buckets.Disconnecting {
		decided.markUnknown(a, expiryOf(a, sg.in.Now))
		nodes.claim(a, false, decided)
	}
	for _, a := range buckets.Unknown {
		nodes.claim(a, false, decided)
	}
	for _, a := range buckets.Ignore {
		if awaitingReport(a) {
			nodes.claim(a, false, decided)
		}
	}
}

// placeOnFreeNodes places one alloc on every eligible node that has none; a
// failed system alloc on the node is the previous alloc of the new one.
func (sg systemGroup) placeOnFreeNodes(nodes *nodeClaims, failed []*structs.Allocation, decided *decisions) []Placement {
	failedOn := map[string]*structs.Allocation{}
	for _, a := range failed {
		if !sg.sysbatch && !decided.stopped(a) {
			failedOn[a.NodeID] = decided.current(a)
		}
	}
	var places []Placement
	for _, id := range slices.Sorted(maps.Keys(sg.in.Eligible)) {
		if nodes.held[id] {
			continue
		}
		p := Placement{Name: allocName(sg.in.Job, sg.tg.Name, 0), TaskGroup: sg.tg, Reason: PlaceNew, NodeID: id}
		if prev := failedOn[id]; prev != nil {
			p.Reason = PlaceReschedule
			p.Previous = prev
			p.StopPrevious = &Stop{Alloc: prev, Description: DescRescheduled}
		}
		places = append(places, p)
	}
	return places
}

// outOfScope reports whether a's node, ready but not eligible for new
// allocs, has left the job's datacenters or node pool: its alloc stops. An
// alloc on a node that is merely ineligible or draining stays.
func outOfScope(in SystemInput, a *structs.Allocation) bool {
	node := in.Nodes[a.NodeID]
	_, eligible := in.Eligible[a.NodeID]
	return !eligible && node != nil && in.InScope != nil && !in.InScope(node)
}

// planUpdates moves running allocs of older job versions to the current
// one. A destructive update stops the old alloc and places the new one on
// the same node in one plan: the old one keeps its resources until its
// client stops it (promise 1), so the new one may wait (blocked) until
// then. At most update.max_parallel are replaced per evaluation. The
// replacements follow places, the placements made before.
func (sg systemGroup) planUpdates(running []*structs.Allocation, places []Placement, decided *decisions) rollout {
	var candidates []*structs.Allocation
	compare := comparer(sg.in.Job, sg.tg.Name)
	for _, a := range running {
		if decided.stopped(a) {
			continue
		}
		a = decided.current(a)
		switch compare(a.Job) {
		case inPlace:
			decided.rewrite(a, UpdateInPlace, func(c *structs.Allocation) { c.Job = sg.in.Job })
		case destructive:
			if _, ok := sg.in.Eligible[a.NodeID]; ok {
				candidates = append(candidates, a)
			}
		}
	}
	out := rollout{places: places}
	limit := len(candidates)
	if u := sg.tg.Update; !sg.sysbatch && u.Rolling() && u.MaxParallel < limit {
		limit = u.MaxParallel
		out.wait = max(u.Stagger, time.Second)
		out.deferred = len(candidates) - limit
	}
	for _, a := range candidates[:limit] {
		decided.stop(a, DescUpdated, false)
		out.places = append(out.places, Placement{
			Name: a.Name, TaskGroup: sg.tg, Reason: PlaceDestructive, Previous: a, NodeID: a.NodeID,
		})
	}
	return out
}
