package reconciler

import (
	"sort"
	"time"

	"github.com/drover-sched/drover/structs"
)

// holdKind says how a slot holder holds its slot, which decides whether a
// scale down may give it up and whether a job update applies to it.
type holdKind uint8

const (
	// holdReplace: a replacement will be placed for alloc (placement set).
	holdReplace holdKind = iota
	// holdFailed: a failed alloc waiting for, or out of, reschedules.
	holdFailed
	// holdUnknown: an unknown alloc with no replacement.
	holdUnknown
	// holdRunning: an alloc running (or starting) on a usable node.
	holdRunning
	// holdDone: a completed batch alloc; nothing to stop or update.
	holdDone
	// holdAwaiting: unknown on a ready node until its client reports: never
	// replaced or reconnected before the report, but a scale down may stop it.
	holdAwaiting
)

// holder is one of the group's Count slots: an existing alloc that keeps it,
// or the alloc whose replacement will.
type holder struct {
	alloc *structs.Allocation
	// index is alloc's name index, the slot it holds.
	index int
	kind  holdKind
	// origin is alloc's bucket.
	origin Bucket
	// place is the replacement to make (holdReplace).
	place *Placement
	// dueAt is when a failed alloc's delayed reschedule is due (holdFailed
	// with a follow-up to create); zero otherwise.
	dueAt time.Time
}

// holding makes the holder of alloc's slot.
func holding(alloc *structs.Allocation, kind holdKind, origin Bucket) *holder {
	return &holder{alloc: alloc, index: alloc.Index(), kind: kind, origin: origin}
}

// replacedBy makes the holder of alloc's slot that a replacement, place,
// will take over.
func replacedBy(alloc *structs.Allocation, origin Bucket, place *Placement) *holder {
	h := holding(alloc, holdReplace, origin)
	h.place = place
	return h
}

// standIn is an unreachable original whose slot a live replacement holds:
// a scale down that gives up the replacement gives up the original too.
type standIn struct {
	original      *structs.Allocation
	replacementID string
}

// countSlots compares the slot holders with the group's count: it gives up
// the extra slots, and the originals their replacements stood in for, and
// returns the holders that keep theirs, in the order they came.
func countSlots(holders []*holder, count int, standIns []standIn, decided *decisions) []*holder {
	keep, drop := trim(holders, count)
	byReplacement := map[string][]*structs.Allocation{}
	for _, s := range standIns {
		byReplacement[s.replacementID] = append(byReplacement[s.replacementID], s.original)
	}
	for _, h := range drop {
		giveUp(decided, h)
		giveUpStandIns(decided, byReplacement, h.alloc.ID)
	}
	return keep
}

// placeSlots makes the placements of the kept slots: the replacements the
// holders asked for, then new allocs for the lowest free name indexes up to
// the group's count.
func placeSlots(in groupInput, keep []*holder) []Placement {
	var places []Placement
	used := map[int]bool{}
	for _, h := range keep {
		used[h.index] = true
		if h.place != nil {
			p := *h.place
			p.Name = h.alloc.Name
			p.TaskGroup = in.tg
			places = append(places, p)
		}
	}
	for _, i := range freeIndexes(used, in.tg.Count-len(keep)) {
		places = append(places, Placement{Name: allocName(in.job, in.tg.Name, i), TaskGroup: in.tg, Reason: PlaceNew})
	}
	return places
}

// giveUp releases a slot on scale down.
func giveUp(decided *decisions, h *holder) {
	if h.origin == Lost || h.origin == Expired {
		return // already stopped as lost; only its replacement is dropped
	}
	decided.stop(h.alloc, DescScaleDown, false)
}

// giveUpStandIns stops, on scale down, the unreachable allocs (and theirs,
// in turn) whose slot the given-up alloc id held as their replacement: the
// slot is gone, so the original must not stay wanted. Stopping an alloc
// awaiting its client's report is allowed (stop wins); it is only never
// replaced or reconnected before the report.
func giveUpStandIns(decided *decisions, byReplacement map[string][]*structs.Allocation, id string) {
	for _, a := range byReplacement[id] {
		if decided.stopped(a) {
			continue
		}
		decided.stop(a, DescScaleDown, false)
		giveUpStandIns(decided, byReplacement, a.ID)
	}
}

// dropRank orders holders of the same name index for a scale down: slots
// that only exist as a replacement to make go first, then failed, unknown
// (reported or not) and finally running allocs.
func dropRank(k holdKind) int {
	if k == holdAwaiting {
		k = holdUnknown
	}
	return int(k)
}

// stoppable reports whether a scale down may give up the slot. An alloc
// awaiting its client's report may be: stop wins over the pending report.
func stoppable(k holdKind) bool { return k != holdDone }

// trim keeps count slots. Duplicate names are given up first, then the
// highest name indexes; completed batch allocs are never given up.
func trim(holders []*holder, count int) (keep, drop []*holder) {
	excess := len(holders) - count
	if excess <= 0 {
		return holders, nil
	}
	less := func(a, b *holder) bool {
		if a.index != b.index {
			return a.index > b.index
		}
		if ra, rb := dropRank(a.kind), dropRank(b.kind); ra != rb {
			return ra < rb
		}
		if a.alloc.CreateIndex != b.alloc.CreateIndex {
			return a.alloc.CreateIndex > b.alloc.CreateIndex
		}
		return a.alloc.ID > b.alloc.ID
	}
	var cand []*holder
	for _, h := range holders {
		if stoppable(h.kind) {
			cand = append(cand, h)
		}
	}
	sort.SliceStable(cand, func(i, j int) bool { return less(cand[i], cand[j]) })
	dropped := map[*holder]bool{}
	// Duplicates first: of several holders of one name, keep the one the
	// order ranks last (running over replacement, older over newer).
	perIndex := map[int]int{}
	for _, h := range holders {
		perIndex[h.index]++
	}
	for _, h := range cand {
		if excess == 0 {
			break
		}
		if perIndex[h.index] > 1 {
			dropped[h] = true
			perIndex[h.index]--
			excess--
		}
	}
	for _, h := range cand {
		if excess == 0 {
			break
		}
		if !dropped[h] {
			dropped[h] = true
			excess--
		}
	}
	for _, h := range holders {
		if dropped[h] {
			drop = append(drop, h)
		} else {
			keep = append(keep, h)
		}
	}
	return keep, drop
}
