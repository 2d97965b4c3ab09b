package reconciler

import (
	"time"

	"github.com/drover-sched/drover/structs"
)

// keepOriginal decides, for an alloc that reconnected while a replacement
// took its place, whether the original survives. The group's
// disconnect.reconcile policy decides, except that a replacement running a
// newer job version always wins (the reconnect must not roll the job back),
// a replacement that already completed (batch) wins because the work is
// done, and a replacement that is itself failed always loses.
//
// best_score compares the scores the two nodes got at placement, but only
// between allocs in the same state: a running alloc is never stopped in
// favour of one that has not started (pending), whatever their scores, so
// a reconnect never trades work that runs for work that may not start.
//
// Ties go to the original: it is the one the client was running all along,
// and keeping it avoids moving work twice.
func keepOriginal(orig, repl *structs.Allocation, strategy string) bool {
	if orig.Job != nil && repl.Job != nil && newerVersion(repl.Job, orig.Job) {
		return false
	}
	switch repl.ClientStatus {
	case structs.AllocClientStatusComplete:
		return false
	case structs.AllocClientStatusFailed, structs.AllocClientStatusLost:
		return true
	}
	switch strategy {
	case structs.ReconcileKeepOriginal:
		return true
	case structs.ReconcileKeepReplacement:
		return false
	case structs.ReconcileLongestRunning:
		o, r := startedAt(orig), startedAt(repl)
		switch {
		case o.IsZero():
			return r.IsZero()
		case r.IsZero():
			return true
		}
		return !o.After(r)
	}
	origRuns := orig.ClientStatus == structs.AllocClientStatusRunning
	replRuns := repl.ClientStatus == structs.AllocClientStatusRunning
	if origRuns != replRuns {
		return origRuns
	}
	return allocScore(orig) >= allocScore(repl)
}

// startedAt is when the alloc's earliest task started (zero if none did):
// the alloc that started first has run longest.
func startedAt(a *structs.Allocation) time.Time {
	var t time.Time
	for _, ts := range a.TaskStates {
		if ts == nil || ts.StartedAt.IsZero() {
			continue
		}
		if t.IsZero() || ts.StartedAt.Before(t) {
			t = ts.StartedAt
		}
	}
	return t
}

// allocScore is the normalized score the alloc's node got when it was
// placed, from the placement metrics stored with it.
func allocScore(a *structs.Allocation) float64 {
	if a.Metrics == nil {
		return 0
	}
	best := 0.0
	for _, m := range a.Metrics.ScoreMetaData {
		if m == nil {
			continue
		}
		if m.NodeID == a.NodeID {
			return m.NormScore
		}
		if m.NormScore > best {
			best = m.NormScore
		}
	}
	return best
}

// successors indexes a group's allocs by the alloc they replaced.
type successors map[string][]*structs.Allocation

func indexSuccessors(allocs []*structs.Allocation) successors {
	s := successors{}
	for _, a := range allocs {
		if a.PreviousAllocation != "" {
			s[a.PreviousAllocation] = append(s[a.PreviousAllocation], a)
		}
	}
	for _, l := range s {
		sortAllocs(l)
	}
	return s
}

// live returns the replacement that currently stands in for a: the first
// descendant (through PreviousAllocation links) that holds a slot of the
// group: wanted running, or failed and not yet replaced, or (batch)
// completed. Replacements that were stopped or rescheduled themselves are
// walked through. nil means nothing stands in for a.
func (s successors) live(a *structs.Allocation, batch bool) *structs.Allocation {
	seen := map[string]bool{a.ID: true}
	queue := append([]*structs.Allocation(nil), s[a.ID]...)
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		if holdsSlot(c, batch) {
			return c
		}
		queue = append(queue, s[c.ID]...)
	}
	return nil
}

// holdsSlot reports whether an alloc, by its own status, occupies one of its
// group's Count slots.
func holdsSlot(a *structs.Allocation, batch bool) bool {
	if a.ServerTerminalStatus() {
		return false
	}
	switch a.ClientStatus {
	case structs.AllocClientStatusLost:
		return false
	case structs.AllocClientStatusFailed:
		return a.NextAllocation == ""
	case structs.AllocClientStatusComplete:
		return batch
	}
	return true
}
