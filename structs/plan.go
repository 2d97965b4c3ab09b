package structs

import "time"

// Plan is a scheduler's proposed change for one evaluation: allocations to
// stop (NodeUpdate, keyed by node) and allocations to place or update
// (NodeAllocation, keyed by node). The plan applier on the leader checks it
// against the newest state and commits what still fits.
type Plan struct {
	EvalID            string
	EvalToken         string
	Priority          int
	AllAtOnce         bool
	Job               *Job
	NodeUpdate        map[string][]*Allocation
	NodeAllocation    map[string][]*Allocation
	Annotations       *PlanAnnotations
	Deployment        *Deployment
	DeploymentUpdates []*DeploymentStatusUpdate
	NodePreemptions   map[string][]*Allocation
	SnapshotIndex     uint64

	// touched names the node of every change made through the methods
	// below, in order, so that a scheduler can fold in what changed since
	// it last looked instead of rereading the whole plan at every
	// placement (TouchedSince). Unexported, so never encoded: it means
	// something only to the process building the plan. NodeUpdate and
	// NodeAllocation must therefore be changed through the methods while
	// a scheduler builds the plan.
	touched []string
}

// TouchedSince returns the nodes whose NodeUpdate or NodeAllocation entries
// the plan's methods changed since mark (0 at first), in order and
// possibly repeated, and the mark to pass next time. A nil plan has none.
func (p *Plan) TouchedSince(mark int) (nodes []string, next int) {
	if p == nil {
		return nil, mark
	}
	if mark >= len(p.touched) {
		return nil, len(p.touched)
	}
	return p.touched[mark:], len(p.touched)
}

// AppendStoppedAlloc records that alloc should stop (or, with clientStatus
// lost, that it is lost because its node is gone). The stored alloc is a
// trimmed copy: the plan carries only what changes.
func (p *Plan) AppendStoppedAlloc(alloc *Allocation, desc, clientStatus string, followupEvalID string) {
	c := alloc.Copy()
	c.DesiredStatus = AllocDesiredStatusStop
	c.DesiredDescription = desc
	if clientStatus != "" {
		c.ClientStatus = clientStatus
	}
	if followupEvalID != "" {
		c.FollowupEvalID = followupEvalID
	}
	p.NodeUpdate[alloc.NodeID] = append(p.NodeUpdate[alloc.NodeID], c)
	p.touched = append(p.touched, alloc.NodeID)
}

// AppendLostAlloc marks an alloc lost and stopped, with a history entry.
func (p *Plan) AppendLostAlloc(alloc *Allocation, desc string, now time.Time) {
	c := alloc.Copy()
	c.DesiredStatus = AllocDesiredStatusStop
	c.DesiredDescription = desc
	c.ClientStatus = AllocClientStatusLost
	c.AppendState(AllocStateFieldClientStatus, AllocClientStatusLost, now)
	p.NodeUpdate[alloc.NodeID] = append(p.NodeUpdate[alloc.NodeID], c)
	p.touched = append(p.touched, alloc.NodeID)
}

// AppendUnknownAlloc marks an alloc on a disconnected node unknown, with the
// history entry the reconnect logic relies on.
func (p *Plan) AppendUnknownAlloc(alloc *Allocation, desc, followupEvalID string, now time.Time) {
	c := alloc.Copy()
	c.ClientStatus = AllocClientStatusUnknown
	c.ClientDescription = desc
	c.AppendState(AllocStateFieldClientStatus, AllocClientStatusUnknown, now)
	if followupEvalID != "" {
		c.FollowupEvalID = followupEvalID
	}
	p.NodeAllocation[alloc.NodeID] = append(p.NodeAllocation[alloc.NodeID], c)
	p.touched = append(p.touched, alloc.NodeID)
}

// AppendAlloc adds a new placement or an in-place update.
func (p *Plan) AppendAlloc(alloc *Allocation) {
	p.NodeAllocation[alloc.NodeID] = append(p.NodeAllocation[alloc.NodeID], alloc)
	p.touched = append(p.touched, alloc.NodeID)
}

// PopUpdate removes the most recent stop for alloc, if it is the last one
// appended for its node (used when an in-place update replaces a stop).
func (p *Plan) PopUpdate(alloc *Allocation) {
	existing := p.NodeUpdate[alloc.NodeID]
	if n := len(existing); n > 0 && existing[n-1].ID == alloc.ID {
		existing = existing[:n-1]
		if len(existing) > 0 {
			p.NodeUpdate[alloc.NodeID] = existing
		} else {
			delete(p.NodeUpdate, alloc.NodeID)
		}
		p.touched = append(p.touched, alloc.NodeID)
	}
}

// IsNoOp reports whether the plan changes nothing.
func (p *Plan) IsNoOp() bool {
	return len(p.NodeUpdate) == 0 && len(p.NodeAllocation) == 0 && p.Deployment == nil && len(p.DeploymentUpdates) == 0
}

// NodeIDs returns every node the plan touches.
func (p *Plan) NodeIDs() []string {
	seen := map[string]struct{}{}
	var out []string
	for _, m := range []map[string][]*Allocation{p.NodeUpdate, p.NodeAllocation} {
		for id := range m {
			if _, ok := seen[id]; !ok {
				seen[id] = struct{}{}
				out = append(out, id)
			}
		}
	}
	return out
}

// PlanResult is what the applier committed: the parts of the plan that
// fit. If some nodes were refused, RefreshIndex tells the worker which state
// index to wait for before the scheduler retries.
type PlanResult struct {
	NodeUpdate        map[string][]*Allocation
	NodeAllocation    map[string][]*Allocation
	Deployment        *Deployment
	DeploymentUpdates []*DeploymentStatusUpdate
	NodePreemptions   map[string][]*Allocation
	RejectedNodes     []string
	RefreshIndex      uint64
	AllocIndex        uint64
}

// IsNoOp reports whether nothing was committed.
func (r *PlanResult) IsNoOp() bool {
	return len(r.NodeUpdate) == 0 && len(r.NodeAllocation) == 0 && r.Deployment == nil && len(r.DeploymentUpdates) == 0
}

// FullCommit reports whether everything in plan was committed, and the
// counts of expected and committed allocations.
func (r *PlanResult) FullCommit(plan *Plan) (bool, int, int) {
	expected, actual := 0, 0
	for node, allocs := range plan.NodeAllocation {
		expected += len(allocs)
		actual += len(r.NodeAllocation[node])
	}
	for node, allocs := range plan.NodeUpdate {
		expected += len(allocs)
		actual += len(r.NodeUpdate[node])
	}
	return expected == actual, expected, actual
}

// PlanAnnotations explain a plan for `job plan`: what each group would do.
type PlanAnnotations struct {
	DesiredTGUpdates map[string]*DesiredUpdates
	PreemptedAllocs  []*AllocListStub
}

// DesiredUpdates counts what the scheduler wants to do to one group.
type DesiredUpdates struct {
	Ignore            uint64
	Place             uint64
	Migrate           uint64
	Stop              uint64
	InPlaceUpdate     uint64
	DestructiveUpdate uint64
	Canary            uint64
	Preemptions       uint64
	Reconnect         uint64
	Disconnect        uint64
	RescheduleNow     uint64
	RescheduleLater   uint64
}
