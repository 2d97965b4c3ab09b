package reconciler

import (
	"sort"
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
}

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
}

// planGroup makes one group's decisions: sort, decide per bucket, count.
func planGroup(in groupInput) *groupPlan {
	c := in.classifier
	b := SortInto(in.allocs, in.nodes, c)
	gp := &groupPlan{name: in.tg.Name, buckets: b, decisions: newDecisions()}
	d := gp.decisions
	succ := indexSuccessors(in.allocs)
	bucketOf := map[string]Bucket{}
	for k := Untainted; k <= Ignore; k++ {
		for _, a := range b.Get(k) {
			bucketOf[a.ID] = k
		}
	}
	check := rescheduleCheck{policy: in.tg.ReschedulePolicy, now: in.now, evalID: in.evalID, pendingEval: in.pendingEval}
	var holders []*holder
	hold := func(h *holder) { h.index = h.alloc.Index(); holders = append(holders, h) }
	// standIns are unreachable allocs whose live replacement holds their
	// slot, by that replacement's ID: a scale down that gives up the
	// replacement gives them up too.
	standIns := map[string][]*structs.Allocation{}

	// Reconnects first: they may stop an alloc sitting in another bucket.
	var failed []*structs.Allocation
	for _, r := range b.Reconnecting {
		gp.reconnected = append(gp.reconnected, r)
		d.rewrite(r, UpdateReconnect, func(c *structs.Allocation) {
			c.AppendState(structs.AllocStateFieldClientStatus, r.ClientStatus, in.now)
		})
		if d.stopped(r) {
			continue // another reconnect of this chain already won
		}
		rec := d.current(r)
		s := succ.live(r, in.batch)
		// A replacement that is itself unreachable defers to its own
		// replacement, if it has one.
		for s != nil && !usable(bucketOf[s.ID]) {
			next := succ.live(s, in.batch)
			if next == nil {
				break
			}
			s = next
		}
		if s != nil && d.stopped(s) {
			s = nil
		}
		switch r.ClientStatus {
		case structs.AllocClientStatusFailed:
			if s == nil {
				failed = append(failed, r)
			} else if rec.NextAllocation == "" {
				// Link it so no later evaluation reschedules it again.
				d.rewrite(r, UpdateReconnect, func(c *structs.Allocation) { c.NextAllocation = s.ID })
			}
		case structs.AllocClientStatusComplete:
			if in.batch {
				hold(&holder{alloc: rec, kind: holdDone, origin: Reconnecting})
				if s != nil {
					d.stop(s, DescOriginalCompleted, false)
				}
			}
		default:
			switch {
			case s == nil:
				hold(&holder{alloc: rec, kind: holdRunning, origin: Reconnecting})
			case !usable(bucketOf[s.ID]) || keepOriginal(r, s, reconcileStrategy(in.tg, r)):
				d.rewrite(r, UpdateReconnect, func(c *structs.Allocation) { c.NextAllocation = "" })
				hold(&holder{alloc: d.current(r), kind: holdRunning, origin: Reconnecting})
				d.stop(s, DescReconnectLoser, false)
			default:
				d.stop(r, DescReconnectLoser, false)
			}
		}
	}

	for _, f := range append(b.Failed, failed...) {
		if d.stopped(f) {
			continue
		}
		cur := d.current(f)
		dec := check.decide(cur)
		switch dec.when {
		case now:
			hold(&holder{alloc: cur, kind: holdReplace, origin: Failed, place: &Placement{
				Reason:            PlaceReschedule,
				Previous:          cur,
				StopPrevious:      &Stop{Alloc: cur, Description: DescRescheduled},
				RescheduleTracker: carryTracker(cur, in.tg.ReschedulePolicy, in.now, dec.delay),
				PenaltyNodes:      []string{cur.NodeID},
			}})
		case later:
			hold(&holder{alloc: cur, kind: holdFailed, origin: Failed, dueAt: dec.at})
		default:
			hold(&holder{alloc: cur, kind: holdFailed, origin: Failed})
		}
	}

	for _, k := range []Bucket{Lost, Expired} {
		for _, a := range b.Get(k) {
			if d.stopped(a) {
				continue
			}
			d.stop(a, lostDescription(k, in.nodes[a.NodeID]), true)
			if succ.live(a, in.batch) == nil {
				hold(&holder{alloc: a, kind: holdReplace, origin: k, place: &Placement{
					Reason:            PlaceLost,
					Previous:          a,
					RescheduleTracker: carryTracker(a, in.tg.ReschedulePolicy, in.now, 0),
				}})
			}
		}
	}

	for _, k := range []Bucket{Disconnecting, Unknown} {
		for _, a := range b.Get(k) {
			if d.stopped(a) {
				continue
			}
			if k == Disconnecting {
				d.markUnknown(a, expiryOf(a, in.now))
			}
			if s := succ.live(a, in.batch); s != nil {
				standIns[s.ID] = append(standIns[s.ID], a)
				continue
			}
			if replaceWhileUnknown(a) {
				hold(&holder{alloc: a, kind: holdReplace, origin: k, place: &Placement{
					Reason:            PlaceDisconnect,
					Previous:          a,
					RescheduleTracker: carryTracker(a, in.tg.ReschedulePolicy, in.now, 0),
				}})
			} else {
				hold(&holder{alloc: a, kind: holdUnknown, origin: k})
			}
		}
	}

	for _, a := range b.Ignore {
		if !awaitingReport(a) || d.stopped(a) {
			continue
		}
		if s := succ.live(a, in.batch); s != nil {
			standIns[s.ID] = append(standIns[s.ID], a)
		} else {
			hold(&holder{alloc: a, kind: holdAwaiting, origin: Ignore})
		}
	}

	for _, a := range b.Migrate {
		if d.stopped(a) {
			continue
		}
		p := &Placement{Reason: PlaceMigrate, Previous: a, RescheduleTracker: a.RescheduleTracker.Copy()}
		if drainDeadlinePassed(in.nodes[a.NodeID], in.now) {
			d.stop(a, DescMigrating, false)
		} else {
			p.StopPrevious = &Stop{Alloc: a, Description: DescMigrating}
		}
		hold(&holder{alloc: a, kind: holdReplace, origin: Migrate, place: p})
	}

	for _, a := range b.Untainted {
		if d.stopped(a) {
			continue
		}
		kind := holdRunning
		if a.ClientStatus == structs.AllocClientStatusComplete {
			kind = holdDone
		}
		hold(&holder{alloc: d.current(a), kind: kind, origin: Untainted})
	}

	keep, drop := trim(holders, in.tg.Count)
	for _, h := range drop {
		giveUp(d, h)
		giveUpStandIns(d, standIns, h.alloc.ID)
	}
	gp.awaiting = awaitingDue(b.Ignore, in.nodes, c, d)
	used := map[int]bool{}
	for _, h := range keep {
		used[h.index] = true
		if h.place != nil {
			p := *h.place
			p.Name = h.alloc.Name
			p.TaskGroup = in.tg
			gp.places = append(gp.places, p)
		}
	}
	for _, i := range freeIndexes(used, in.tg.Count-len(keep)) {
		gp.places = append(gp.places, Placement{Name: allocName(in.job, in.tg.Name, i), TaskGroup: in.tg, Reason: PlaceNew})
	}

	gp.planUpdates(in, keep)
	replacing := map[string]bool{}
	for _, p := range gp.places {
		if p.Previous != nil {
			replacing[p.Previous.ID] = true
		}
	}
	for _, h := range keep {
		if h.kind != holdReplace && !d.stopped(h.alloc) && !replacing[h.alloc.ID] {
			gp.kept = append(gp.kept, h.alloc)
		}
	}
	for _, h := range keep {
		if h.kind == holdFailed && !h.dueAt.IsZero() && !d.stopped(h.alloc) && !replacing[h.alloc.ID] {
			gp.delayed = append(gp.delayed, due{allocID: h.alloc.ID, at: h.dueAt})
		}
	}
	// Placements refer to the newest version of what they replace, so a
	// conditional stop also records, say, a reconnect.
	for i := range gp.places {
		p := &gp.places[i]
		if p.Previous != nil {
			p.Previous = d.current(p.Previous)
			if p.StopPrevious != nil {
				s := *p.StopPrevious
				s.Alloc = p.Previous
				p.StopPrevious = &s
			}
		}
	}
	return gp
}

// planUpdates moves the kept allocs of older job versions to the current
// one: in place when only in-place fields changed, else by a destructive
// replacement, at most update.max_parallel of those in flight at a time.
func (gp *groupPlan) planUpdates(in groupInput, keep []*holder) {
	d := gp.decisions
	var candidates []*holder
	inflight := 0
	compare := comparer(in.job, in.tg.Name)
	for _, h := range keep {
		if h.kind != holdRunning && h.kind != holdFailed {
			continue
		}
		a := d.current(h.alloc)
		switch compare(a.Job) {
		case unchanged:
			if a.ClientStatus == structs.AllocClientStatusPending && a.PreviousAllocation != "" {
				inflight++
			}
		case inPlace:
			if h.kind == holdRunning {
				d.rewrite(a, UpdateInPlace, func(c *structs.Allocation) { c.Job = in.job })
			}
		case destructive:
			candidates = append(candidates, h)
		}
	}
	limit := len(candidates)
	if u := in.tg.Update; !in.batch && u.Rolling() {
		limit = max(min(limit, u.MaxParallel-inflight), 0)
		if limit < len(candidates) {
			gp.rollingWait = max(u.Stagger, time.Second)
			gp.deferred = len(candidates) - limit
		}
	}
	for _, h := range candidates[:limit] {
		a := d.current(h.alloc)
		gp.places = append(gp.places, Placement{
			Name: a.Name, TaskGroup: in.tg, Reason: PlaceDestructive, Previous: a,
			StopPrevious: &Stop{Alloc: a, Description: DescUpdated},
		})
	}
}

// usable reports whether an alloc in bucket k runs somewhere reachable; a
// replacement that is itself unreachable cannot win a reconnect.
func usable(k Bucket) bool {
	return k == Untainted || k == Migrate || k == Failed || k == Reconnecting
}

// reconcileStrategy is the disconnect.reconcile policy for a reconnect: the
// current job's, else the version the alloc runs.
func reconcileStrategy(tg *structs.TaskGroup, a *structs.Allocation) string {
	if tg != nil && tg.Disconnect != nil {
		return tg.Disconnect.ReconcileStrategy()
	}
	return a.DisconnectStrategy().ReconcileStrategy()
}

// expiryOf is when an alloc marked unknown now becomes lost: now plus its
// group's lost_after, or never (zero) when the group forbids rescheduling
// on lost nodes.
func expiryOf(a *structs.Allocation, now time.Time) time.Time {
	if preventRescheduleOnLost(a) || !a.SupportsDisconnect() {
		return time.Time{}
	}
	return a.DisconnectTimeout(now)
}

// replaceWhileUnknown reports whether an unknown alloc gets a replacement
// while it may still come back: disconnect.replace, unless the group
// forbids rescheduling on lost nodes.
func replaceWhileUnknown(a *structs.Allocation) bool {
	return !preventRescheduleOnLost(a) && a.DisconnectStrategy().ShouldReplace()
}

// awaitingDue lists the allocs of ignore that wait for their client's
// report and are not being stopped, each due when its report window ends:
// the follow-up evaluation that acts then must exist, or nothing would look
// at the alloc again until the job or the node changes.
func awaitingDue(ignore AllocSet, nodes map[string]*structs.Node, c Classifier, d *decisions) []due {
	var out []due
	for _, a := range ignore {
		if awaitingReport(a) && !d.stopped(a) {
			out = append(out, dueOf(a, c.reportDeadline(a, nodes[a.NodeID])))
		}
	}
	return out
}

// lostDescription says why an alloc of the Lost or Expired bucket is lost.
func lostDescription(k Bucket, node *structs.Node) string {
	switch {
	case k == Lost:
		return DescLost
	case node != nil && node.Status != structs.NodeStatusDown && node.Status != structs.NodeStatusDisconnected:
		return DescUnreported
	}
	return DescExpired
}

// awaitingReport reports whether a is unknown on a node that is back, and
// its client has not reported it yet.
func awaitingReport(a *structs.Allocation) bool {
	return !a.ServerTerminalStatus() && a.ClientStatus == structs.AllocClientStatusUnknown
}

// drainDeadlinePassed reports whether the node's drain deadline forces its
// allocs off even without a place to go.
func drainDeadlinePassed(n *structs.Node, now time.Time) bool {
	return n != nil && n.DrainStrategy != nil && !n.DrainStrategy.ForceDeadline.IsZero() &&
		!now.Before(n.DrainStrategy.ForceDeadline)
}

// giveUp releases a slot on scale down.
func giveUp(d *decisions, h *holder) {
	if h.origin == Lost || h.origin == Expired {
		return // already stopped as lost; only its replacement is dropped
	}
	d.stop(h.alloc, DescScaleDown, false)
}

// giveUpStandIns stops, on scale down, the unreachable allocs (and theirs,
// in turn) whose slot the given-up alloc id held as their replacement: the
// slot is gone, so the original must not stay wanted. Stopping an alloc
// awaiting its client's report is allowed (stop wins); it is only never
// replaced or reconnected before the report.
func giveUpStandIns(d *decisions, standIns map[string][]*structs.Allocation, id string) {
	for _, a := range standIns[id] {
		if d.stopped(a) {
			continue
		}
		d.stop(a, DescScaleDown, false)
		giveUpStandIns(d, standIns, a.ID)
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
