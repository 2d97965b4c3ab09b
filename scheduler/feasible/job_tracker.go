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

	existing map[string]*structs.Allocation
	// planAlloc and planStop hold every version of an allocation the plan
	// has, in plan order; the last one is current. An alloc may be stopped
	// twice (lost, then stopped) and one of the two popped again.
	planAlloc map[string][]*structs.Allocation
	planStop  map[string][]*structs.Allocation
	// stopMarks and allocMarks hold, per node, a copy of the plan's
	// NodeUpdate and NodeAllocation entries already folded in.
	stopMarks  map[string][]*structs.Allocation
	allocMarks map[string][]*structs.Allocation
	// excluded is an allocation being updated in place, not counted.
	excluded string
	// planMark is how far the plan's journal was folded in.
	planMark int

	live    map[string]placement
	perNode map[string]map[string]int // node -> group -> count; "" is the whole job
	props   map[propKey]map[string]int
	// propLog names, per property count, every value whose count changed
	// since the count was made, in order, so that a spread source can
	// rescore only the buckets of those values (propertyChanges).
	propLog map[propKey][]string
}

type placement struct{ nodeID, group string }

// propKey names a property count: a target such as ${meta.rack} over the
// whole job (group "") or one group.
type propKey struct{ target, group string }

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
	t.propLog = map[propKey][]string{}
	t.countAll()
	c.tracker = t
	return t
}

// countAll counts everything from the snapshot and the whole plan.
func (t *jobTracker) countAll() {
	t.planAlloc = map[string][]*structs.Allocation{}
	t.planStop = map[string][]*structs.Allocation{}
	t.stopMarks = map[string][]*structs.Allocation{}
	t.allocMarks = map[string][]*structs.Allocation{}
	t.live = map[string]placement{}
	t.perNode = map[string]map[string]int{}
	t.excluded = ""
	for k := range t.props {
		t.props[k] = map[string]int{}
	}
	for id := range t.existing {
		t.refresh(id)
	}
	t.syncAll(t.ctx.plan)
}

// sync folds in what changed in the plan since the last sync: the nodes
// the plan's journal (Plan.TouchedSince) names, each compared entry by
// entry with what was folded in, so that a list that shrank or was
// rewritten (a PopUpdate after an in-place check) undoes and redoes only
// the entries that differ. A sync costs what changed, not the size of the
// plan: rereading every node of the plan at every placement made an
// evaluation quadratic in its count.
func (t *jobTracker) sync(plan *structs.Plan) {
	if plan == nil {
		return
	}
	var nodes []string
	nodes, t.planMark = plan.TouchedSince(t.planMark)
	for _, node := range nodes {
		t.syncNode(plan, node)
	}
}

// syncAll folds in the whole plan, once, when the tracker is built.
func (t *jobTracker) syncAll(plan *structs.Plan) {
	if plan == nil {
		return
	}
	for node := range plan.NodeUpdate {
		t.syncNode(plan, node)
	}
	for node := range plan.NodeAllocation {
		if _, done := plan.NodeUpdate[node]; !done {
			t.syncNode(plan, node)
		}
	}
	_, t.planMark = plan.TouchedSince(0)
}

func (t *jobTracker) syncNode(plan *structs.Plan, node string) {
	t.syncList(node, plan.NodeUpdate[node], t.stopMarks, true)
	t.syncList(node, plan.NodeAllocation[node], t.allocMarks, false)
}

func (t *jobTracker) syncList(node string, allocs []*structs.Allocation, marks map[string][]*structs.Allocation, stop bool) {
	seen := marks[node]
	p := 0
	for p < len(seen) && p < len(allocs) && seen[p] == allocs[p] {
		p++
	}
	for _, a := range seen[p:] {
		t.forget(a, stop)
	}
	for _, a := range allocs[p:] {
		t.learn(a, stop)
	}
	if len(allocs) == 0 {
		delete(marks, node)
		return
	}
	// seen is the tracker's own copy: the plan's slices may be resliced
	// and overwritten in place.
	marks[node] = append(seen[:p], allocs[p:]...)
}

func (t *jobTracker) learn(a *structs.Allocation, stop bool) {
	if a.JobID != t.jobID || a.Namespace != t.namespace {
		return
	}
	if stop {
		t.planStop[a.ID] = append(t.planStop[a.ID], a)
	} else {
		t.planAlloc[a.ID] = append(t.planAlloc[a.ID], a)
	}
	t.refresh(a.ID)
}

func (t *jobTracker) forget(a *structs.Allocation, stop bool) {
	if a.JobID != t.jobID || a.Namespace != t.namespace {
		return
	}
	m := t.planAlloc
	if stop {
		m = t.planStop
	}
	versions := m[a.ID]
	for i := len(versions) - 1; i >= 0; i-- {
		if versions[i] == a {
			versions = append(versions[:i:i], versions[i+1:]...)
			break
		}
	}
	if len(versions) == 0 {
		delete(m, a.ID)
	} else {
		m[a.ID] = versions
	}
	t.refresh(a.ID)
}

// exclude makes alloc id not count anywhere until exclude is called again
// (with "" to count everything): an allocation being updated in place is
// replaced by the placement being checked, on the same node.
func (t *jobTracker) exclude(id string) {
	prev := t.excluded
	t.excluded = id
	if prev != "" {
		t.refresh(prev)
	}
	if id != "" {
		t.refresh(id)
	}
}

// refresh recomputes where alloc id counts, from its newest version: a
// stop in the plan wins over a placement or in-place update in the plan,
// which wins over the snapshot.
func (t *jobTracker) refresh(id string) {
	v := t.existing[id]
	if vs := t.planAlloc[id]; len(vs) > 0 {
		v = vs[len(vs)-1]
	}
	if vs := t.planStop[id]; len(vs) > 0 {
		v = vs[len(vs)-1]
	}
	old, had := t.live[id]
	isLive := v != nil && !v.TerminalStatus() && id != t.excluded
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
			t.propLog[k] = append(t.propLog[k], v)
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

// propertyChanges returns the values of target (over group, or the whole
// job for "") whose count changed since mark (0 when the count was made),
// possibly repeated, and the mark for next time. The counts are those of
// propertyCounts, which must have been called for the key.
func (t *jobTracker) propertyChanges(target, group string, mark int) ([]string, int) {
	log := t.propLog[propKey{target: target, group: group}]
	if mark >= len(log) {
		return nil, len(log)
	}
	return log[mark:], len(log)
}
