package scheduler

import (
	"time"

	"github.com/drover-sched/drover/scheduler/reconciler"
	"github.com/drover-sched/drover/structs"
)

// planBuilder writes the reconciler's decisions into a plan and remembers
// the plan's copy of every existing alloc it touched, so that a replacement
// placed later can link it (NextAllocation) in the same entry.
type planBuilder struct {
	plan *structs.Plan
	now  time.Time
	// copies are the plan's versions of existing allocs, by ID.
	copies map[string]*structs.Allocation
}

func newPlanBuilder(plan *structs.Plan, now time.Time) *planBuilder {
	return &planBuilder{plan: plan, now: now, copies: map[string]*structs.Allocation{}}
}

func last(m map[string][]*structs.Allocation, node string) *structs.Allocation {
	l := m[node]
	return l[len(l)-1]
}

// stop appends a stop (or a lost mark).
func (b *planBuilder) stop(s reconciler.Stop) {
	a := s.Alloc
	if s.Lost {
		b.plan.AppendLostAlloc(a, s.Description, b.now)
	} else {
		b.plan.AppendStoppedAlloc(a, s.Description, "", "")
	}
	b.copies[a.ID] = last(b.plan.NodeUpdate, a.NodeID)
}

// disconnect marks an alloc unknown.
func (b *planBuilder) disconnect(d reconciler.Disconnect) {
	b.plan.AppendUnknownAlloc(d.Alloc, reconciler.DescUnknown, d.FollowupEvalID, b.now)
	b.copies[d.Alloc.ID] = last(b.plan.NodeAllocation, d.Alloc.NodeID)
}

// update appends a new version of an existing alloc that keeps running.
func (b *planBuilder) update(u reconciler.Update) {
	c := u.Alloc.Copy()
	b.plan.AppendAlloc(c)
	b.copies[c.ID] = c
}

// place appends a new alloc and links it with the alloc it replaces: the
// conditional stop of the previous alloc is committed now that the
// replacement has a node, and the previous alloc's plan entry (or a new
// update of it) points at the replacement.
func (b *planBuilder) place(a *structs.Allocation, p reconciler.Placement) {
	b.plan.AppendAlloc(a)
	if p.Previous == nil {
		return
	}
	if p.StopPrevious != nil {
		b.stop(*p.StopPrevious)
	}
	if c, ok := b.copies[p.Previous.ID]; ok {
		c.NextAllocation = a.ID
		return
	}
	c := p.Previous.Copy()
	c.NextAllocation = a.ID
	b.plan.AppendAlloc(c)
	b.copies[c.ID] = c
}
