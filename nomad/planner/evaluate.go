package planner

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/structs"
)

// optimisticView is a state snapshot plus the allocations of plans that
// were accepted but whose raft entry may not be applied yet. It lets the
// applier check plan N+1 while plan N is being committed (pipelining),
// without waiting for N to reach the state store.
//
// We keep a small overlay keyed by alloc ID rather than writing the results
// into a copy of the snapshot with UpsertPlanResults: the overlay holds
// only what fit checks need (the version of each alloc the commit will
// store), costs nothing per plan beyond the allocs it touches, and is
// rebuilt over every fresh snapshot from the plans still in flight. Its
// merge rules mirror the state store's (state.UpsertPlanResults): a stop
// takes only the desired fields and a lost mark; an update keeps the
// client-owned fields of the stored alloc unless it marks it lost or
// unknown. Where the overlay and the store could differ, the overlay errs
// towards holding resources, so an optimistic check never admits what the
// committed state would refuse.
//
// A view is written only between plan checks, never during one, so the
// parallel node checks of one plan may read it without a lock.
type optimisticView struct {
	base   View
	allocs map[string]*structs.Allocation            // by ID
	byNode map[string]map[string]*structs.Allocation // node ID -> alloc ID -> alloc
}

func newOptimisticView(base View) *optimisticView {
	return &optimisticView{base: base, allocs: map[string]*structs.Allocation{}, byNode: map[string]map[string]*structs.Allocation{}}
}

func (v *optimisticView) NodeByID(ws memdb.WatchSet, id string) (*structs.Node, error) {
	return v.base.NodeByID(ws, id)
}

func (v *optimisticView) AllocByID(ws memdb.WatchSet, id string) (*structs.Allocation, error) {
	if a, ok := v.allocs[id]; ok {
		return a, nil
	}
	return v.base.AllocByID(ws, id)
}

func (v *optimisticView) AllocsByNode(ws memdb.WatchSet, nodeID string) ([]*structs.Allocation, error) {
	base, err := v.base.AllocsByNode(ws, nodeID)
	if err != nil {
		return nil, err
	}
	over := v.byNode[nodeID]
	if len(over) == 0 {
		return base, nil
	}
	out := make([]*structs.Allocation, 0, len(base)+len(over))
	seen := make(map[string]struct{}, len(base))
	for _, a := range base {
		seen[a.ID] = struct{}{}
		if o, ok := over[a.ID]; ok {
			a = o
		}
		out = append(out, a)
	}
	ids := make([]string, 0, len(over))
	for id := range over {
		if _, ok := seen[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids) // deterministic order for fit reasons
	for _, id := range ids {
		out = append(out, over[id])
	}
	return out, nil
}

// apply lays an accepted plan result over the view. Placements go first
// and stops second, as the node check orders them.
func (v *optimisticView) apply(r *structs.PlanResult) error {
	put := func(nodeID string, a *structs.Allocation) {
		v.allocs[a.ID] = a
		m := v.byNode[nodeID]
		if m == nil {
			m = map[string]*structs.Allocation{}
			v.byNode[nodeID] = m
		}
		m[a.ID] = a
	}
	for _, nodeID := range slices.Sorted(maps.Keys(r.NodeAllocation)) {
		for _, a := range r.NodeAllocation[nodeID] {
			existing, err := v.AllocByID(nil, a.ID)
			if err != nil {
				return err
			}
			put(nodeID, mergedVersion(existing, a, false))
		}
	}
	for _, m := range []map[string][]*structs.Allocation{r.NodeUpdate, r.NodePreemptions} {
		for _, nodeID := range slices.Sorted(maps.Keys(m)) {
			for _, a := range m[nodeID] {
				existing, err := v.AllocByID(nil, a.ID)
				if err != nil {
					return err
				}
				if existing == nil {
					continue // a stop of an alloc that is gone: the store skips it
				}
				put(nodeID, mergedVersion(existing, a, true))
			}
		}
	}
	return nil
}

// mergedVersion returns the alloc the state store will hold after the plan
// commits proposed over existing (nil for a new alloc). isStop says whether
// proposed came from NodeUpdate or NodePreemptions.
func mergedVersion(existing, proposed *structs.Allocation, isStop bool) *structs.Allocation {
	if existing == nil {
		c := *proposed
		if c.ClientStatus == "" {
			c.ClientStatus = structs.AllocClientStatusPending
		}
		return &c
	}
	serverMark := func(status string) bool {
		return (status == structs.AllocClientStatusLost || (!isStop && status == structs.AllocClientStatusUnknown)) &&
			status != existing.ClientStatus && !existing.ClientTerminalStatus()
	}
	if isStop {
		c := *existing
		c.DesiredStatus = proposed.DesiredStatus
		if c.DesiredStatus == "" {
			c.DesiredStatus = structs.AllocDesiredStatusStop
		}
		c.DesiredDescription = proposed.DesiredDescription
		if serverMark(proposed.ClientStatus) {
			c.ClientStatus = proposed.ClientStatus
		}
		return &c
	}
	c := *proposed
	if !serverMark(proposed.ClientStatus) {
		c.ClientStatus = existing.ClientStatus
		c.ClientDescription = existing.ClientDescription
	}
	return &c
}

// nodeVerdict is the outcome of checking one node of a plan.
type nodeVerdict struct {
	fit    bool
	reason string
	err    error
}

// evaluatePlan checks every node of plan against view and returns what may
// be committed. Nodes are checked in parallel, at most workers at a time;
// the goroutines are started and waited for here. A node that fails drops
// out of the result (a partial commit) and is listed in RejectedNodes,
// unless the plan is AllAtOnce, when nothing is committed.
func evaluatePlan(view View, plan *structs.Plan, workers int) (*structs.PlanResult, map[string]string, error) {
	nodes := planNodeIDs(plan)
	verdicts := make([]nodeVerdict, len(nodes))
	check := func(i int) {
		fit, reason, err := evaluateNodePlan(view, plan, nodes[i])
		verdicts[i] = nodeVerdict{fit: fit, reason: reason, err: err}
	}
	if workers <= 1 || len(nodes) <= 1 {
		for i := range nodes {
			check(i)
		}
	} else {
		var wg sync.WaitGroup
		work := make(chan int)
		for w := 0; w < min(workers, len(nodes)); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range work {
					check(i)
				}
			}()
		}
		for i := range nodes {
			work <- i
		}
		close(work)
		wg.Wait()
	}

	result := &structs.PlanResult{
		NodeUpdate:        map[string][]*structs.Allocation{},
		NodeAllocation:    map[string][]*structs.Allocation{},
		NodePreemptions:   map[string][]*structs.Allocation{},
		Deployment:        plan.Deployment,
		DeploymentUpdates: plan.DeploymentUpdates,
	}
	var reasons map[string]string
	for i, id := range nodes {
		v := verdicts[i]
		if v.err != nil {
			return nil, nil, fmt.Errorf("checking node %s: %w", structs.ShortID(id), v.err)
		}
		if !v.fit {
			result.RejectedNodes = append(result.RejectedNodes, id)
			if reasons == nil {
				reasons = map[string]string{}
			}
			reasons[id] = v.reason
			continue
		}
		if s := plan.NodeUpdate[id]; len(s) > 0 {
			result.NodeUpdate[id] = s
		}
		if a := plan.NodeAllocation[id]; len(a) > 0 {
			result.NodeAllocation[id] = a
		}
		if p := plan.NodePreemptions[id]; len(p) > 0 {
			result.NodePreemptions[id] = p
		}
	}
	if plan.AllAtOnce && len(result.RejectedNodes) > 0 {
		result.NodeUpdate = map[string][]*structs.Allocation{}
		result.NodeAllocation = map[string][]*structs.Allocation{}
		result.NodePreemptions = map[string][]*structs.Allocation{}
		result.Deployment, result.DeploymentUpdates = nil, nil
	}
	return result, reasons, nil
}

// planNodeIDs returns the plan's nodes, sorted so results and raft entries
// do not depend on map order.
func planNodeIDs(plan *structs.Plan) []string {
	seen := map[string]struct{}{}
	for _, m := range []map[string][]*structs.Allocation{plan.NodeUpdate, plan.NodeAllocation, plan.NodePreemptions} {
		for id := range m {
			seen[id] = struct{}{}
		}
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// evaluateNodePlan decides whether the plan's changes on one node may be
// committed against view. The rules:
//
//   - Stops, preemptions and lost or unknown marks of existing allocs are
//     always allowed (they are how work leaves a down or disconnected
//     node), provided they are valid server updates of the stored alloc.
//   - New placements and in-place updates that change an alloc's grant
//     need a node that exists and is ready, not draining and eligible;
//     updates that leave the grant as it is (bookkeeping) do not.
//   - Then everything that will hold resources on the node must fit
//     (structs.AllocsFit): an alloc stays counted until its client reports
//     it terminal, even if this plan or an earlier one stops it, unless it
//     is marked lost (promise 1).
func evaluateNodePlan(view View, plan *structs.Plan, nodeID string) (bool, string, error) {
	existing, err := view.AllocsByNode(nil, nodeID)
	if err != nil {
		return false, "", err
	}
	byID := make(map[string]*structs.Allocation, len(existing))
	for _, a := range existing {
		byID[a.ID] = a
	}
	next := make(map[string]*structs.Allocation) // alloc ID -> version after the plan

	newWork := false
	for _, a := range plan.NodeAllocation[nodeID] {
		ex := byID[a.ID]
		if ex == nil {
			if other, err := view.AllocByID(nil, a.ID); err != nil {
				return false, "", err
			} else if other != nil {
				return false, fmt.Sprintf("alloc %s belongs to node %s", structs.ShortID(a.ID), structs.ShortID(other.NodeID)), nil
			}
			if err := structs.ValidateClientTransition(structs.ActorServer, "", orPending(a.ClientStatus)); err != nil {
				return false, err.Error(), nil
			}
			if err := structs.ValidateDesiredTransition("", orRun(a.DesiredStatus)); err != nil {
				return false, err.Error(), nil
			}
			newWork = true
			next[a.ID] = mergedVersion(nil, a, false)
			continue
		}
		m := mergedVersion(ex, a, false)
		if err := structs.ValidateServerUpdate(ex, m); err != nil {
			return false, err.Error(), nil
		}
		// An update that changes the grant is new work and needs a node
		// that takes work. Bookkeeping (a reconnect record, a follow-up
		// link, a new job version with the same resources) is not, and
		// must also land on nodes that are draining or ineligible.
		marks := a.ClientStatus == structs.AllocClientStatusLost || a.ClientStatus == structs.AllocClientStatusUnknown
		if !marks && !structs.DeepEqual(ex.AllocatedResources, m.AllocatedResources) {
			newWork = true
		}
		next[a.ID] = m
	}
	for _, stops := range [][]*structs.Allocation{plan.NodeUpdate[nodeID], plan.NodePreemptions[nodeID]} {
		for _, a := range stops {
			ex := byID[a.ID]
			if ex == nil {
				return false, fmt.Sprintf("alloc %s to stop is not on the node", structs.ShortID(a.ID)), nil
			}
			if _, dup := next[a.ID]; dup {
				// The store would apply the stop and then the update, which
				// cannot go back to run: refuse rather than fail the commit.
				return false, fmt.Sprintf("alloc %s is both updated and stopped", structs.ShortID(a.ID)), nil
			}
			m := mergedVersion(ex, a, true)
			if err := structs.ValidateServerUpdate(ex, m); err != nil {
				return false, err.Error(), nil
			}
			next[a.ID] = m
		}
	}
	if !newWork {
		return true, "", nil
	}

	node, err := view.NodeByID(nil, nodeID)
	if err != nil {
		return false, "", err
	}
	if reason := placementRefusal(node); reason != "" {
		return false, reason, nil
	}
	proposed := make([]*structs.Allocation, 0, len(existing)+len(next))
	for _, a := range existing {
		if m, ok := next[a.ID]; ok {
			a = m
			delete(next, a.ID)
		}
		proposed = append(proposed, a)
	}
	for _, a := range plan.NodeAllocation[nodeID] { // new placements, in plan order
		if m, ok := next[a.ID]; ok {
			proposed = append(proposed, m)
		}
	}
	fit, dim, _, err := structs.AllocsFit(node, proposed, nil)
	if err != nil {
		return false, "", err
	}
	if !fit {
		return false, "resources exhausted: " + dim, nil
	}
	return true, "", nil
}

// placementRefusal says why new work may not go to node, or "".
func placementRefusal(node *structs.Node) string {
	switch {
	case node == nil:
		return "node does not exist"
	case node.Status != structs.NodeStatusReady:
		return "node is " + node.Status
	case node.DrainStrategy != nil:
		return "node is draining"
	case node.SchedulingEligibility != structs.NodeSchedulingEligible:
		return "node is ineligible for scheduling"
	}
	return ""
}

func orPending(s string) string {
	if s == "" {
		return structs.AllocClientStatusPending
	}
	return s
}

func orRun(s string) string {
	if s == "" {
		return structs.AllocDesiredStatusRun
	}
	return s
}
