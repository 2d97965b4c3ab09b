package reconciler

import (
	"time"

	"github.com/drover-sched/drover/structs"
)

// The per-bucket steps of planGroup (README.md, "2. DECIDE PER BUCKET"). Each
// takes the allocs of its bucket, records its stops, marks and rewrites in
// decided, and returns the slot holders it found; none looks at an alloc an
// earlier step already stopped.

// reconnectOutcome is what deciding the Reconnecting bucket found.
type reconnectOutcome struct {
	// holders are the reconnected allocs that keep their slot.
	holders []*holder
	// reconnected are every alloc whose reconnect this result records.
	reconnected []*structs.Allocation
	// failed are reconnected allocs that failed while away with nothing
	// standing in for them: the reschedule policy decides them next.
	failed []*structs.Allocation
}

// decideReconnecting records each reconnect and picks the survivor between
// a reconnected alloc and the live replacement that took its slot.
func decideReconnecting(in groupInput, buckets *Buckets, replacements successors, decided *decisions) reconnectOutcome {
	bucketOf := bucketIndex(buckets)
	var out reconnectOutcome
	for _, orig := range buckets.Reconnecting {
		out.reconnected = append(out.reconnected, orig)
		decided.rewrite(orig, UpdateReconnect, func(c *structs.Allocation) {
			c.AppendState(structs.AllocStateFieldClientStatus, orig.ClientStatus, in.now)
		})
		if decided.stopped(orig) {
			continue // another reconnect of this chain already won
		}
		recorded := decided.current(orig)
		repl := reconnectRival(orig, replacements, bucketOf, in.batch, decided)
		switch orig.ClientStatus {
		case structs.AllocClientStatusFailed:
			if repl == nil {
				out.failed = append(out.failed, orig)
			} else if recorded.NextAllocation == "" {
				// Link it so no later evaluation reschedules it again.
				decided.rewrite(orig, UpdateReconnect, func(c *structs.Allocation) { c.NextAllocation = repl.ID })
			}
		case structs.AllocClientStatusComplete:
			if in.batch {
				out.holders = append(out.holders, holding(recorded, holdDone, Reconnecting))
				if repl != nil {
					decided.stop(repl, DescOriginalCompleted, false)
				}
			}
		default:
			switch {
			case repl == nil:
				out.holders = append(out.holders, holding(recorded, holdRunning, Reconnecting))
			case !usable(bucketOf[repl.ID]) || keepOriginal(orig, repl, reconcileStrategy(in.tg, orig)):
				decided.rewrite(orig, UpdateReconnect, func(c *structs.Allocation) { c.NextAllocation = "" })
				out.holders = append(out.holders, holding(decided.current(orig), holdRunning, Reconnecting))
				decided.stop(repl, DescReconnectLoser, false)
			default:
				decided.stop(orig, DescReconnectLoser, false)
			}
		}
	}
	return out
}

// reconnectRival is the live replacement a reconnected alloc competes with
// for its slot, or nil. A replacement that is itself unreachable defers to
// its own replacement, if it has one; one already stopped is no rival.
func reconnectRival(orig *structs.Allocation, replacements successors, bucketOf map[string]Bucket, batch bool, decided *decisions) *structs.Allocation {
	repl := replacements.live(orig, batch)
	for repl != nil && !usable(bucketOf[repl.ID]) {
		next := replacements.live(repl, batch)
		if next == nil {
			break
		}
		repl = next
	}
	if repl != nil && decided.stopped(repl) {
		return nil
	}
	return repl
}

// decideFailed applies the reschedule policy to the failed allocs: a
// replacement now (which stops the failed alloc once placed), a follow-up
// eval later, or nothing; the failed alloc holds its slot until replaced.
func decideFailed(in groupInput, failed []*structs.Allocation, decided *decisions) []*holder {
	policy := rescheduleCheck{policy: in.tg.ReschedulePolicy, now: in.now, evalID: in.evalID, pendingEval: in.pendingEval}
	var holders []*holder
	for _, a := range failed {
		if decided.stopped(a) {
			continue
		}
		cur := decided.current(a)
		verdict := policy.decide(cur)
		switch verdict.timing {
		case rescheduleNow:
			holders = append(holders, replacedBy(cur, Failed, &Placement{
				Reason:            PlaceReschedule,
				Previous:          cur,
				StopPrevious:      &Stop{Alloc: cur, Description: DescRescheduled},
				RescheduleTracker: carryTracker(cur, in.tg.ReschedulePolicy, in.now, verdict.delay),
				PenaltyNodes:      []string{cur.NodeID},
			}))
		case rescheduleLater:
			h := holding(cur, holdFailed, Failed)
			h.dueAt = verdict.at
			holders = append(holders, h)
		default:
			holders = append(holders, holding(cur, holdFailed, Failed))
		}
	}
	return holders
}

// decideLost stops the allocs of the Lost and Expired buckets as lost and
// replaces each one that no live alloc replaces yet.
func decideLost(in groupInput, buckets *Buckets, replacements successors, decided *decisions) []*holder {
	var holders []*holder
	for _, k := range []Bucket{Lost, Expired} {
		for _, a := range buckets.Get(k) {
			if decided.stopped(a) {
				continue
			}
			decided.stop(a, lostDescription(k, in.nodes[a.NodeID]), true)
			if replacements.live(a, in.batch) == nil {
				holders = append(holders, replacedBy(a, k, &Placement{
					Reason:            PlaceLost,
					Previous:          a,
					RescheduleTracker: carryTracker(a, in.tg.ReschedulePolicy, in.now, 0),
				}))
			}
		}
	}
	return holders
}

// unreachableOutcome is what deciding allocs that cannot be reached, but
// may come back, found.
type unreachableOutcome struct {
	// holders are those that hold their slot, themselves or by a
	// replacement to make.
	holders []*holder
	// standIns are those whose live replacement holds their slot.
	standIns []standIn
}

// decideUnknown marks the Disconnecting allocs unknown (with the time their
// disconnect window ends) and lets them and the Unknown ones wait: replaced
// when disconnect.replace allows and nothing live replaces them yet.
func decideUnknown(in groupInput, buckets *Buckets, replacements successors, decided *decisions) unreachableOutcome {
	var out unreachableOutcome
	for _, k := range []Bucket{Disconnecting, Unknown} {
		for _, a := range buckets.Get(k) {
			if decided.stopped(a) {
				continue
			}
			if k == Disconnecting {
				decided.markUnknown(a, expiryOf(a, in.now))
			}
			if repl := replacements.live(a, in.batch); repl != nil {
				out.standIns = append(out.standIns, standIn{original: a, replacementID: repl.ID})
				continue
			}
			if replaceWhileUnknown(a) {
				out.holders = append(out.holders, replacedBy(a, k, &Placement{
					Reason:            PlaceDisconnect,
					Previous:          a,
					RescheduleTracker: carryTracker(a, in.tg.ReschedulePolicy, in.now, 0),
				}))
			} else {
				out.holders = append(out.holders, holding(a, holdUnknown, k))
			}
		}
	}
	return out
}

// decideAwaitingReport finds, in the Ignore bucket, the unknown allocs on
// ready nodes that wait for their client's report: each holds its slot
// unless a live replacement does. They are never replaced or reconnected
// before the report.
func decideAwaitingReport(in groupInput, ignore AllocSet, replacements successors, decided *decisions) unreachableOutcome {
	var out unreachableOutcome
	for _, a := range ignore {
		if !awaitingReport(a) || decided.stopped(a) {
			continue
		}
		if repl := replacements.live(a, in.batch); repl != nil {
			out.standIns = append(out.standIns, standIn{original: a, replacementID: repl.ID})
		} else {
			out.holders = append(out.holders, holding(a, holdAwaiting, Ignore))
		}
	}
	return out
}

// decideMigrate replaces the allocs of draining nodes; each is stopped once
// its replacement is placed, or at once when the drain deadline has passed.
func decideMigrate(in groupInput, migrate AllocSet, decided *decisions) []*holder {
	var holders []*holder
	for _, a := range migrate {
		if decided.stopped(a) {
			continue
		}
		p := &Placement{Reason: PlaceMigrate, Previous: a, RescheduleTracker: a.RescheduleTracker.Copy()}
		if drainDeadlinePassed(in.nodes[a.NodeID], in.now) {
			decided.stop(a, DescMigrating, false)
		} else {
			p.StopPrevious = &Stop{Alloc: a, Description: DescMigrating}
		}
		holders = append(holders, replacedBy(a, Migrate, p))
	}
	return holders
}

// decideUntainted keeps the Untainted allocs in their slots; a completed
// one (batch) is done and never given up.
func decideUntainted(untainted AllocSet, decided *decisions) []*holder {
	var holders []*holder
	for _, a := range untainted {
		if decided.stopped(a) {
			continue
		}
		kind := holdRunning
		if a.ClientStatus == structs.AllocClientStatusComplete {
			kind = holdDone
		}
		holders = append(holders, holding(decided.current(a), kind, Untainted))
	}
	return holders
}

// bucketIndex maps each alloc's ID to its bucket.
func bucketIndex(buckets *Buckets) map[string]Bucket {
	bucketOf := map[string]Bucket{}
	for k := Untainted; k <= Ignore; k++ {
		for _, a := range buckets.Get(k) {
			bucketOf[a.ID] = k
		}
	}
	return bucketOf
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
func awaitingDue(ignore AllocSet, nodes map[string]*structs.Node, c Classifier, decided *decisions) []due {
	var out []due
	for _, a := range ignore {
		if awaitingReport(a) && !decided.stopped(a) {
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
