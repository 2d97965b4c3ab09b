package feasible

import (
	"github.com/drover-sched/drover/structs"
)

// jobTracker knows where the job's live allocations are: those in the
// snapshot, overlaid with what the plan stops, updates and places. It keeps
// counts per node and per task group, and per value of any node property a
// checker or ranker asked about (distinct_property, spread), and updates
// them incrementally: each sync folds in only the plan entries appended
// since the previous sync. That is what keeps a spread placement as cheap as
// a binpack one (see doc.go).
//
// "Live" means not terminal from either side: an allocation the plan stops
// still holds its resources (promise 1, see ProposedAllocs) but no longer
// counts as the job being on its node.
type jobTracker struct {
	ctx       *EvalContext
	namespace string
	jobID     string

	existing  map[string]*structs.Allocation
	planAlloc map[string]*structs.Allocation
	planStop  map[string]*structs.Allocation
	// stopMarks and allocMarks remember, per node, how much of the plan's
	// NodeUpdate and NodeAllocation lists was folded in.
	stopMarks  map[string]planMark
	allocMarks map[string]planMark

	live    map[string]placement
	perNode map[string]map[string]int // node -> group -> count; "" is the whole job
	props   map[propKey]map[string]int
}

type placement struct{ nodeID, group string }

// propKey names a property count: a target such as ${meta.rack} over the
// whole job (group "") or one group.
type propKey struct{ target, group string }

// planMark remembers how much of one plan list was folded in, and its last
// entry, so that a list that shrank or was rewritten is noticed and
// triggers a rebuild.
type planMark struct {
	n    int
	last *structs.Allocation
}

// jobTracker returns the tracker for job on the current snapshot, reading
// the job's allocations the first time.
func (c *EvalContext) jobTracker(job *structs.Job) *jobTracker {
	if t := c.tracker; t != nil && t.jobID == job.ID && t.namespace == job.Namespace {
		return t
	}
	t := &jobTracker{ctx: c, namespace: job.Namespace, jobID: job.ID, existing: map[string]*structs.Allocation{}}
	if c.state != nil {
		allocs, err := c.state.AllocsByJob(nil, job.Namespace, job.ID, false)
		if err != nil {
			c.logger.Warn("reading the job's allocations failed", "job_id", job.ID, "error", err)
		}
		for _, a := range allocs {
			t.existing[a.ID] = a
		}
	}
	t.props = map[propKey]map[string]int{}
	t.rebuild()
	c.tracker = t
	return t
}

// rebuild recounts everything from the snapshot and the whole plan.
func (t *jobTracker) rebuild() {
	t.planAlloc = map[string]*structs.Allocation{}
	t.planStop = map[string]*structs.Allocation{}
	t.stopMarks = map[string]planMark{}
	t.allocMarks = map[string]planMark{}
	t.live = map[string]placement{}
	t.perNode = map[string]map[string]int{}
	for k := range t.props {
		t.props[k] = map[string]int{}
	}
	for id := range t.existing {
		t.refresh(id)
	}
	t.sync(t.ctx.plan)
}

// sync folds in plan entries appended since the last sync. The plan is only
// ever appended to in the common case; anything else (PopUpdate, a rebuilt
// list) is detected by a shorter list or a different last entry and costs a
// full rebuild.
func (t *jobTracker) sync(plan *structs.Plan) {
	if plan == nil {
		return
	}
	if !t.absorbAll(plan.NodeUpdate, t.stopMarks, true) || !t.absorbAll(plan.NodeAllocation, t.allocMarks, false) {
		t.rebuild()
	}
}

// absorbAll folds in the new tail of every list. Its cost is one map
// lookup per node in the plan, which stays small next to ranking a
// placement even for thousands of placements.
func (t *jobTracker) absorbAll(lists map[string][]*structs.Allocation, marks map[string]planMark, stop bool) bool {
	marked, matched := len(marks), 0
	for node, allocs := range lists {
		m, ok := marks[node]
		if ok {
			matched++
			if len(allocs) == m.n && allocs[m.n-1] == m.last {
				continue
			}
		}
		if len(allocs) < m.n || (m.n > 0 && allocs[m.n-1] != m.last) {
			return false
		}
		if len(allocs) == 0 {
			continue
		}
		for _, a := range allocs[m.n:] {
			if a.JobID != t.jobID || a.Namespace != t.namespace {
				continue
			}
			if stop {
				t.planStop[a.ID] = a
			} else {
				t.planAlloc[a.ID] = a
			}
			t.refresh(a.ID)
		}
		marks[node] = planMark{n: len(allocs), last: allocs[len(allocs)-1]}
	}
	// A node list that disappeared from the plan leaves a mark nobody
	// matched.
	return matched == marked
}

// refresh recomputes where alloc id counts, from its newest version: a
// stop in the plan wins over a placement or in-place update in the plan,
// which wins over the snapshot.
func (t *jobTracker) refresh(id string) {
	v := t.planStop[id]
	if v == nil {
		v = t.planAlloc[id]
	}
	if v == nil {
		v = t.existing[id]
	}
	old, had := t.live[id]
	isLive := v != nil && !v.TerminalStatus()
	var now placement
	if isLive {
		now = placement{nodeID: v.NodeID, group: v.TaskGroup}
		if had && old == now {
			return
		}
	}
	if had {
		delete(t.live, id)
		t.count(old, -1)
	}
	if isLive {
		t.live[id] = now
		t.count(now, 1)
	}
}

func (t *jobTracker) count(p placement, d int) {
	groups := t.perNode[p.nodeID]
	if groups == nil {
		groups = map[string]int{}
		t.perNode[p.nodeID] = groups
	}
	groups[""] += d
	groups[p.group] += d
	if len(t.props) == 0 {
		return
	}
	node := t.ctx.node(p.nodeID)
	if node == nil {
		return
	}
	for k, counts := range t.props {
		if k.group != "" && k.group != p.group {
			continue
		}
		if v, ok := resolveTarget(k.target, node); ok {
			counts[v] += d
		}
	}
}

// onNode returns how many live allocations of group (or of the whole job,
// for "") are on the node.
func (t *jobTracker) onNode(nodeID, group string) int {
	return t.perNode[nodeID][group]
}

// propertyCounts returns live allocations per value of target, over group
// (or the whole job, for ""). The map is kept up to date by later syncs;
// callers must not change it.
func (t *jobTracker) propertyCounts(target, group string) map[string]int {
	k := propKey{target: target, group: group}
	if counts, ok := t.props[k]; ok {
		return counts
	}
	counts := map[string]int{}
	for _, p := range t.live {
		if group != "" && p.group != group {
			continue
		}
		if node := t.ctx.node(p.nodeID); node != nil {
			if v, ok := resolveTarget(target, node); ok {
				counts[v]++
			}
		}
	}
	t.props[k] = counts
	return counts
}
