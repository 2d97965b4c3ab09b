package feasible

import (
	"sort"

	"github.com/drover-sched/drover/structs"
)

// groupInfo is everything about one task group of the current job that does
// not change from one Select to the next: its feasibility chain, what it
// asks for, and its affinities and spreads. The stack builds it on the
// group's first Select after SetJob.
type groupInfo struct {
	tg       *structs.TaskGroup
	checkers []checker
	// static is how many of the first checkers decide from the node
	// object alone (status, drivers, constraints). Nodes come from one
	// snapshot and are never modified, so their verdict holds for the
	// whole evaluation; the checkers after them (distinct_hosts,
	// distinct_property) depend on where the job is, which every
	// placement changes.
	static int

	ask    structs.ComparableResources
	netAsk *structs.NetworkResource
	netErr error

	affinities []*structs.Affinity
	spreads    []*structs.Spread

	// allocName is the placement Select is checking, for the checkers
	// whose verdict depends on it (per_alloc host volumes).
	allocName string

	// full remembers the nodes the group does not fit on (fit_memo.go);
	// noMemo turns it off for the reference path of the equivalence test.
	full   fullNodes
	noMemo bool

	// candidates is the bucketed node source for groups with spreads or
	// affinities, built lazily per SetNodes (source.go).
	candidates *bucketSource
	// verdicts are the static checks' verdicts for the ring's nodes, for
	// groups without (ring_verdicts.go), per SetNodes.
	verdicts *staticVerdicts
}

// newGroupInfo gathers the job's, the group's and its tasks' constraints
// into a checker chain ordered cheapest first: node status, drivers,
// the node's user.denylist, host volumes, host networks and the group's
// network mode, class-cached
// constraints, per-node constraints, then per_alloc host volumes and the
// checks that consult the job's allocations.
func newGroupInfo(ctx *EvalContext, job *structs.Job, tg *structs.TaskGroup) *groupInfo {
	g := &groupInfo{tg: tg, ask: structs.TaskGroupAsk(tg)}
	g.netAsk, g.netErr = structs.GroupNetworkAsk(tg)

	var classWide, perNode []*structs.Constraint
	var distinct []checker
	add := func(cs []*structs.Constraint, group string) {
		for _, c := range cs {
			switch c.Operand {
			case structs.ConstraintDistinctHosts:
				if distinctHostsEnabled(c) {
					distinct = append(distinct, distinctHostsChecker{ctx: ctx, job: job, group: group})
				}
			case structs.ConstraintDistinctProperty:
				distinct = append(distinct, newDistinctPropertyChecker(ctx, job, group, c))
			default:
				if targetIsUnique(c.LTarget) || targetIsUnique(c.RTarget) {
					perNode = append(perNode, c)
				} else {
					classWide = append(classWide, c)
				}
			}
		}
	}
	add(job.Constraints, "")
	add(tg.Constraints, tg.Name)
	drivers := map[string]struct{}{}
	for _, t := range tg.Tasks {
		add(t.Constraints, tg.Name)
		if t.Driver != "" {
			drivers[t.Driver] = struct{}{}
		}
		g.affinities = append(g.affinities, t.Affinities...)
	}
	names := make([]string, 0, len(drivers))
	for d := range drivers {
		names = append(names, d)
	}
	sort.Strings(names)

	g.checkers = append(g.checkers, readyChecker{job: job}, driverChecker{drivers: names})
	if uc, ok := newUserChecker(tg); ok {
		g.checkers = append(g.checkers, uc)
	}
	// Host volumes and host networks are not in the computed class: a
	// node that gains one must unblock the group's blocked evaluation.
	volumes, perAllocVolumes, okVolumes, okPerAlloc := newHostVolumeCheckers(tg, &g.allocName)
	if okVolumes {
		ctx.classes.escaped = true
		g.checkers = append(g.checkers, volumes)
	}
	if nc, ok := newHostNetworkChecker(g.netAsk); ok {
		ctx.classes.escaped = true
		g.checkers = append(g.checkers, nc)
	}
	if mc, ok := newNetworkModeChecker(tg); ok {
		ctx.classes.escaped = true
		g.checkers = append(g.checkers, mc)
	}
	if len(classWide) > 0 {
		g.checkers = append(g.checkers, classChecker{ctx: ctx, group: tg.Name, inner: constraintChecker{ctx: ctx, constraints: classWide}})
	}
	if len(perNode) > 0 {
		ctx.classes.escaped = true
		g.checkers = append(g.checkers, constraintChecker{ctx: ctx, constraints: perNode})
	}
	g.static = len(g.checkers)
	if okPerAlloc {
		ctx.classes.escaped = true
		g.checkers = append(g.checkers, perAllocVolumes)
	}
	g.checkers = append(g.checkers, distinct...)

	g.affinities = append(append(append([]*structs.Affinity(nil), job.Affinities...), tg.Affinities...), g.affinities...)
	g.spreads = append(append([]*structs.Spread(nil), job.Spreads...), tg.Spreads...)
	return g
}

// feasibleFrom runs the chain from checker first on (0 for all of it) and
// records the first refusal in the metrics.
func (g *groupInfo) feasibleFrom(ctx *EvalContext, node *structs.Node, first int) bool {
	for _, c := range g.checkers[first:] {
		if reason := c.check(node); reason != "" {
			ctx.metrics.FilterNode(node.ComputedClass, reason)
			return false
		}
	}
	return true
}

// staticReason runs the static part of the chain (see static) without
// recording anything: "" if the node passes it, else the reason.
func (g *groupInfo) staticReason(node *structs.Node) string {
	for _, c := range g.checkers[:g.static] {
		if reason := c.check(node); reason != "" {
			return reason
		}
	}
	return ""
}

// desiredCount is the group's count, at least one, for ratios.
func (g *groupInfo) desiredCount() int {
	if g.tg.Count < 1 {
		return 1
	}
	return g.tg.Count
}
