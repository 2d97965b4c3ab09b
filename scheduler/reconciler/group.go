package reconciler

import (
	"time"

	"github.com/drover-sched/drover/structs"
)

// groupInput is one task group's share of the Input.
type groupInput struct {
	job    *structs.Job
	tg     *structs.TaskGroup
	allocs []*structs.Allocation
	nodes  map[string]*structs.Node
	batch  bool
	now    time.Time
	evalID string
	// pendingEval reports whether the job has a pending eval with this ID.
	pendingEval func(id string) bool
	classifier  Classifier
	// rollout is the current deployment's part in the group.
	rollout groupRollout
}

// groupPlan is one group's decisions before follow-up evals get IDs.
type groupPlan struct {
	name      string
	buckets   *Buckets
	decisions *decisions
	places    []Placement
	// delayed are failed allocs whose reschedule needs a follow-up eval.
	delayed []due
	// reconnected are allocs whose reconnect is recorded in this result.
	reconnected []*structs.Allocation
	// rollingWait is the stagger before the next batch of destructive
	// updates, when some were deferred (zero when none were).
	rollingWait time.Duration
	deferred    int
	// kept are the existing allocs that keep their slot themselves.
	kept []*structs.Allocation
	// awaiting are unknown allocs on ready nodes waiting for their
	// client's report, due when their report window ends.
	awaiting []due
	// deploy is what the group asks of the job's deployment.
	deploy groupDeploy
}

// planGroup makes one group's decisions in the steps of README.md: sort the
// allocs into buckets, decide per bucket, count the slot holders against
// Count, and update the survivors of older job versions.
//
// Every step is a function that takes what it reads and returns what it
// decided about slots. The one record they share is decided, the group's one
// decision per alloc, and it is passed to each step in turn: a step must see
// what an earlier one stopped (a reconnect may stop an alloc of another
// bucket), and the order in which decisions are first made is the order of
// the result. The steps run in README.md's order, so the holders, and with
// them the placements, come in that order too.
func planGroup(in groupInput) *groupPlan {
	buckets := SortInto(in.allocs, in.nodes, in.classifier)
	decided := newDecisions()
	replacements := indexSuccessors(in.allocs)

	// Reconnects first: they may stop an alloc sitting in another bucket.
	reconnecting := decideReconnecting(in, buckets, replacements, decided)
	failed := decideFailed(in, concat(buckets.Failed, reconnecting.failed), decided)
	lost := decideLost(in, buckets, replacements, decided)
	unknown := decideUnknown(in, buckets, replacements, decided)
	awaiting := decideAwaitingReport(in, buckets.Ignore, replacements, decided)
	migrating := decideMigrate(in, buckets.Migrate, decided)
	untainted := decideUntainted(buckets.Untainted, decided)

	holders := concat(reconnecting.holders, failed, lost, unknown.holders,
		awaiting.holders, migrating, untainted)
	// Canaries awaiting promotion hold no slot; promoted ones take the
	// slots of the old allocs of their names.
	holders, canaries := splitCanaries(in, holders, decided)
	holders = retireForCanaries(in, holders, decided)
	keep := countSlots(holders, in.tg.Count, concat(unknown.standIns, awaiting.standIns), decided)
	reportsDue := awaitingDue(buckets.Ignore, in.nodes, in.classifier, decided)
	updates := planUpdates(in, keep, canaries, placeSlots(in, keep), decided)

	replaced := previousIDs(updates.places)
	// Canaries hold no slot but are kept, and a failed one waits for its
	// delayed reschedule like any other.
	delayed := delayedReschedules(concat(keep, canaries), decided, replaced)
	return &groupPlan{
		name:        in.tg.Name,
		buckets:     buckets,
		decisions:   decided,
		places:      refreshPrevious(updates.places, decided),
		delayed:     delayed,
		reconnected: reconnecting.reconnected,
		rollingWait: updates.wait,
		deferred:    updates.deferred,
		kept:        keptAllocs(concat(keep, canaries), decided, replaced),
		awaiting:    reportsDue,
		deploy:      deployNeeds(in, updates, len(delayed), canaries, decided),
	}
}

// previousIDs lists the allocs that a placement replaces.
func previousIDs(places []Placement) map[string]bool {
	replaced := map[string]bool{}
	for _, p := range places {
		if p.Previous != nil {
			replaced[p.Previous.ID] = true
		}
	}
	return replaced
}

// keptAllocs are the existing allocs that keep their slot themselves: not
// stopped and not replaced by a placement of this result.
func keptAllocs(keep []*holder, decided *decisions, replaced map[string]bool) []*structs.Allocation {
	var kept []*structs.Allocation
	for _, h := range keep {
		if h.kind != holdReplace && !decided.stopped(h.alloc) && !replaced[h.alloc.ID] {
			kept = append(kept, h.alloc)
		}
	}
	return kept
}

// delayedReschedules are the failed allocs that keep their slot until a
// follow-up eval reschedules them, each due when its delay ends.
func delayedReschedules(keep []*holder, decided *decisions, replaced map[string]bool) []due {
	var delayed []due
	for _, h := range keep {
		if h.kind == holdFailed && !h.dueAt.IsZero() && !decided.stopped(h.alloc) && !replaced[h.alloc.ID] {
			delayed = append(delayed, due{allocID: h.alloc.ID, at: h.dueAt})
		}
	}
	return delayed
}

// refreshPrevious points each placement at the newest version of what it
// replaces, so a conditional stop also records, say, a reconnect.
func refreshPrevious(places []Placement, decided *decisions) []Placement {
	for i := range places {
		p := &places[i]
		if p.Previous == nil {
			continue
		}
		p.Previous = decided.current(p.Previous)
		if p.StopPrevious != nil {
			stop := *p.StopPrevious
			stop.Alloc = p.Previous
			p.StopPrevious = &stop
		}
	}
	return places
}
