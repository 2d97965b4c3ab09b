package reconciler

import (
	"time"

	"github.com/drover-sched/drover/structs"
)

// decision is what happens to one existing alloc. An alloc has at most one
// decision, and a decision is exactly one of: stop, mark unknown, or rewrite
// (update); this is how the reconciler guarantees that no alloc is both
// kept and stopped.
type decision struct {
	// alloc is the alloc's newest version: a copy once anything changed.
	alloc *structs.Allocation
	// update is what changed in alloc (0 if nothing).
	update UpdateKind
	// stop, if set, wins over update: the stop records alloc as changed.
	stop *Stop
	// disconnect marks the alloc unknown; expiry is when its window ends
	// (zero when it never does).
	disconnect bool
	expiry     time.Time
	// followup is the disconnect-timeout eval, once it has an ID.
	followup string
}

// decisions collects one group's decisions in the order they were first
// made, so the result is deterministic.
type decisions struct {
	order []string
	byID  map[string]*decision
}

func newDecisions() *decisions { return &decisions{byID: map[string]*decision{}} }

func (d *decisions) get(a *structs.Allocation) *decision {
	if x, ok := d.byID[a.ID]; ok {
		return x
	}
	x := &decision{alloc: a}
	d.byID[a.ID] = x
	d.order = append(d.order, a.ID)
	return x
}

// current returns the newest version of a.
func (d *decisions) current(a *structs.Allocation) *structs.Allocation {
	if x, ok := d.byID[a.ID]; ok {
		return x.alloc
	}
	return a
}

// stopped reports whether a is already being stopped.
func (d *decisions) stopped(a *structs.Allocation) bool {
	x, ok := d.byID[a.ID]
	return ok && x.stop != nil
}

// rewrite records a new version of a, made by change from the current one.
func (d *decisions) rewrite(a *structs.Allocation, kind UpdateKind, change func(c *structs.Allocation)) {
	x := d.get(a)
	if x.alloc == a {
		x.alloc = a.Copy()
	}
	change(x.alloc)
	x.update |= kind
}

// stop stops a; it replaces a pending disconnect (a stopped alloc need not
// be marked unknown).
func (d *decisions) stop(a *structs.Allocation, desc string, lost bool) {
	x := d.get(a)
	x.stop = &Stop{Alloc: x.alloc, Description: desc, Lost: lost}
	x.disconnect = false
}

// markUnknown marks a unknown, expiring at expiry (zero: never).
func (d *decisions) markUnknown(a *structs.Allocation, expiry time.Time) {
	x := d.get(a)
	x.disconnect = true
	x.expiry = expiry
}
