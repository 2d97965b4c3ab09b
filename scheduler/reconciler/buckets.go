package reconciler

import (
	"sort"
	"time"

	"github.com/drover-sched/drover/structs"
)

// Bucket names where an allocation stands, from its own status and its
// node's. Each allocation of a group is in exactly one bucket.
type Bucket uint8

const (
	// Untainted allocs run (or start) on a usable node, or are batch allocs
	// of the current version that completed: they hold their slot.
	Untainted Bucket = iota
	// Migrate allocs are on a draining node (the node has a drain strategy,
	// or the drainer set DesiredTransition.Migrate) and move elsewhere.
	Migrate
	// Lost allocs are on a down or deleted node, or on a disconnected node
	// whose group has no disconnect window or that never reported them
	// started (pending): they are marked lost and replaced.
	Lost
	// Disconnecting allocs are on a disconnected node and not yet marked
	// unknown; their group has a disconnect window.
	Disconnecting
	// Reconnecting allocs were marked unknown, their node is ready again and
	// their client has reported them since: keep them or their replacement.
	Reconnecting
	// Expired allocs are unknown past their disconnect window, or unknown
	// on a node that is ready again but unreported past the report window:
	// they become lost.
	Expired
	// Unknown allocs are already unknown, inside their disconnect window,
	// with the node still disconnected (or down, when the group forbids
	// rescheduling on lost nodes): they wait.
	Unknown
	// Failed allocs failed on the client and were not yet replaced: the
	// reschedule policy decides.
	Failed
	// Ignore allocs need nothing: they are stopping or stopped, completed
	// (service) or already replaced, or unknown on a ready node whose client
	// has not reported them yet (inside the report window; a follow-up
	// eval is due when it ends).
	Ignore
)

var bucketNames = [...]string{"untainted", "migrate", "lost", "disconnecting", "reconnecting", "expired", "unknown", "failed", "ignore"}

func (b Bucket) String() string {
	if int(b) < len(bucketNames) {
		return bucketNames[b]
	}
	return "invalid"
}

// AllocSet is a bucket's allocations, kept sorted by name index then ID so
// that every decision made by walking a set is deterministic.
type AllocSet []*structs.Allocation

// IDs returns the allocs' IDs in order.
func (s AllocSet) IDs() []string {
	out := make([]string, len(s))
	for i, a := range s {
		out[i] = a.ID
	}
	return out
}

func sortAllocs(s AllocSet) {
	sort.SliceStable(s, func(i, j int) bool {
		ii, ij := s[i].Index(), s[j].Index()
		if ii != ij {
			return ii < ij
		}
		if s[i].CreateIndex != s[j].CreateIndex {
			return s[i].CreateIndex < s[j].CreateIndex
		}
		return s[i].ID < s[j].ID
	})
}

// Buckets is one group's allocations, sorted.
type Buckets struct {
	Untainted     AllocSet
	Migrate       AllocSet
	Lost          AllocSet
	Disconnecting AllocSet
	Reconnecting  AllocSet
	Expired       AllocSet
	Unknown       AllocSet
	Failed        AllocSet
	Ignore        AllocSet
}

// Get returns the set for b.
func (b *Buckets) Get(k Bucket) AllocSet {
	return *b.ptr(k)
}

func (b *Buckets) ptr(k Bucket) *AllocSet {
	switch k {
	case Untainted:
		return &b.Untainted
	case Migrate:
		return &b.Migrate
	case Lost:
		return &b.Lost
	case Disconnecting:
		return &b.Disconnecting
	case Reconnecting:
		return &b.Reconnecting
	case Expired:
		return &b.Expired
	case Unknown:
		return &b.Unknown
	case Failed:
		return &b.Failed
	}
	return &b.Ignore
}

// SortInto classifies every alloc and returns the buckets, each sorted.
func SortInto(allocs []*structs.Allocation, nodes map[string]*structs.Node, c Classifier) *Buckets {
	b := &Buckets{}
	for _, a := range allocs {
		node := nodes[a.NodeID]
		k := c.Classify(a, node)
		p := b.ptr(k)
		*p = append(*p, a)
	}
	for k := Untainted; k <= Ignore; k++ {
		sortAllocs(*b.ptr(k))
	}
	return b
}

// Classifier holds what classification needs besides the alloc and its node.
type Classifier struct {
	// Job is the current job version (nil when deleted).
	Job *structs.Job
	// Batch is true for batch jobs: their completed allocs hold their slot.
	Batch bool
	// EvalID is the eval being processed: an unknown alloc whose
	// FollowupEvalID names it has expired.
	EvalID string
	Now    time.Time
	// DueAt is when the eval being processed was due (its WaitUntil, zero
	// if none). The broker releases no eval before then, so it is a lower
	// bound on the time even where Now, from another server's clock, is a
	// little behind.
	DueAt time.Time
	// ReportWindow is Input.ReportWindow (zero: DefaultReportWindow).
	ReportWindow time.Duration
}

// newClassifier is the classifier of one evaluation.
func newClassifier(job *structs.Job, batch bool, eval *structs.Evaluation, now time.Time, window time.Duration) Classifier {
	return Classifier{Job: job, Batch: batch, EvalID: eval.ID, Now: now, DueAt: eval.WaitUntil, ReportWindow: window}
}

// Classify returns the bucket of alloc a on node (nil if the node is gone).
// The order of the checks is the order of precedence:
//
//   - the servers already want it stopped: ignore;
//   - it was disconnected, its node is ready and its client has reported
//     it since (ClientStatus is no longer unknown): reconnecting, whatever
//     it reported;
//   - its client is done with it: a failed one may be rescheduled, a
//     completed batch one of the current version holds its slot;
//   - otherwise by node: gone or down is lost, disconnected is
//     disconnecting, unknown or expired (but lost if still pending),
//     marked to migrate by the drainer (or on a node past its drain
//     deadline) is migrate, and an alloc still unknown on a ready node waits
//     for its client's report.
func (c Classifier) Classify(a *structs.Allocation, node *structs.Node) Bucket {
	if a.ServerTerminalStatus() {
		return Ignore
	}
	nodeUp := node != nil && (node.Status == structs.NodeStatusReady || node.Status == structs.NodeStatusInit)
	if a.NeedsToReconnect() && a.ClientStatus != structs.AllocClientStatusUnknown && nodeUp {
		return Reconnecting
	}
	switch a.ClientStatus {
	case structs.AllocClientStatusFailed:
		if a.NextAllocation != "" {
			return Ignore
		}
		return Failed
	case structs.AllocClientStatusComplete:
		if c.Batch && c.Job != nil && a.Job != nil && sameVersion(a.Job, c.Job) {
			return Untainted
		}
		return Ignore
	case structs.AllocClientStatusLost:
		return Ignore
	}

	holdsOnLost := preventRescheduleOnLost(a)
	switch {
	case node == nil:
		return Lost
	case node.Status == structs.NodeStatusDown:
		if holdsOnLost {
			return c.unknownBucket(a, node, false)
		}
		return Lost
	case node.Status == structs.NodeStatusDisconnected:
		if holdsOnLost {
			return c.unknownBucket(a, node, false)
		}
		// A pending alloc was never reported started: there is nothing on
		// its client to reconnect to, so it is lost like one on a down
		// node rather than held unknown in its slot.
		if !a.SupportsDisconnect() || a.ClientStatus == structs.AllocClientStatusPending {
			return Lost
		}
		return c.unknownBucket(a, node, true)
	}
	if a.ClientStatus == structs.AllocClientStatusUnknown {
		// The node is back but its client has not reported this alloc:
		// leave it alone until it does (DESIGN.md, "Node lifecycle"), for
		// the report window only. A client that is back and has not
		// reported it by then does not have it: it is lost, whatever the
		// group's disconnect policy, since its node is not away any more.
		if c.reportOverdue(a, node) {
			return Expired
		}
		return Ignore
	}
	// An alloc on a draining node moves when the drainer says so (it paces
	// each group by its migrate block) or once the drain's deadline has
	// passed; until then it keeps its slot like any other.
	if a.DesiredTransition.ShouldMigrate() || node.DrainStrategy.DeadlinePassed(c.Now) {
		return Migrate
	}
	return Untainted
}

// unknownBucket sorts an alloc on an unreachable node that may come back.
func (c Classifier) unknownBucket(a *structs.Allocation, node *structs.Node, expires bool) Bucket {
	if a.ClientStatus != structs.AllocClientStatusUnknown {
		return Disconnecting
	}
	if expires && c.expired(a, node) {
		return Expired
	}
	return Unknown
}

// expired reports whether an unknown alloc's disconnect window is over.
func (c Classifier) expired(a *structs.Allocation, node *structs.Node) bool {
	if c.EvalID != "" && a.FollowupEvalID == c.EvalID {
		return true
	}
	at, ok := unknownSince(a, node)
	if !ok {
		// Nothing says when it became unknown, so no window can be
		// measured: it waits. It is still bounded: the heartbeater marks
		// a disconnected node down once the longest window of its allocs
		// has passed, and the alloc is then lost.
		return false
	}
	return !c.Now.Before(a.DisconnectTimeout(at))
}

// reportDeadline is when an unknown alloc on a ready node stops waiting for
// its client's report: the report window after the node became ready (its
// StatusUpdatedAt) or after the alloc was marked unknown, whichever is
// later. A drain or eligibility change also moves StatusUpdatedAt; that
// only lengthens the wait, by an operator's action.
func (c Classifier) reportDeadline(a *structs.Allocation, node *structs.Node) time.Time {
	var since time.Time
	if node != nil && node.StatusUpdatedAt != 0 {
		since = time.Unix(node.StatusUpdatedAt, 0)
	}
	if at, ok := unknownSince(a, node); ok && at.After(since) {
		since = at
	}
	// With no time known at all (only records no Drover server wrote),
	// the node has been ready for as long as anyone can tell.
	return since.Add(reportWindow(c.ReportWindow))
}

// reportOverdue reports whether an unknown alloc on a ready node has waited
// for its client's report past its deadline.
func (c Classifier) reportOverdue(a *structs.Allocation, node *structs.Node) bool {
	now := c.Now
	if c.DueAt.After(now) {
		now = c.DueAt
	}
	return !now.Before(c.reportDeadline(a, node))
}

// unknownSince is when an unknown alloc became unknown: its AllocStates
// entry, which the plan that marked it writes. An alloc without that entry
// (written before AllocStates were kept, or restored from elsewhere) is
// not taken as expired: it is measured from its ModifyTime, which the plan
// that marked it stamped and later writes only move forward, so its window
// is never cut short; else from its node's StatusUpdatedAt, when the node's
// current status began (its disconnect, normally one evaluation before the
// mark). ok is false when none of them is known.
func unknownSince(a *structs.Allocation, node *structs.Node) (time.Time, bool) {
	if at, ok := a.DisconnectedAt(); ok {
		return at, true
	}
	if a.ModifyTime != 0 {
		return time.Unix(0, a.ModifyTime), true
	}
	if node != nil && node.StatusUpdatedAt != 0 {
		return time.Unix(node.StatusUpdatedAt, 0), true
	}
	return time.Time{}, false
}

// preventRescheduleOnLost reports whether the alloc's group asks that allocs
// on unreachable nodes wait as unknown instead of being replaced.
func preventRescheduleOnLost(a *structs.Allocation) bool {
	tg := a.LookupTaskGroup()
	return tg != nil && tg.PreventRescheduleOnLost
}

// sameVersion reports whether two job versions are the same registration.
func sameVersion(a, b *structs.Job) bool {
	return a.Version == b.Version && a.JobModifyIndex == b.JobModifyIndex
}

// newerVersion reports whether a is a later registration than b.
func newerVersion(a, b *structs.Job) bool {
	if a.Version != b.Version {
		return a.Version > b.Version
	}
	return a.JobModifyIndex > b.JobModifyIndex
}
