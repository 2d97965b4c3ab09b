package reconciler

import (
	"time"

	"github.com/drover-sched/drover/structs"
)

// rescheduleNowWindow is how close to due a failed alloc must be to be
// rescheduled by this evaluation rather than a follow-up: a follow-up eval
// for a reschedule due in a second would only add a round trip.
const rescheduleNowWindow = time.Second

// maxTrackedEvents bounds a reschedule tracker for unlimited policies: the
// delay functions need only the last two events, the rest is history for
// `alloc status`.
const maxTrackedEvents = 10

// rescheduleTiming is the outcome of the reschedule policy for one failed
// alloc: whether, and when, it is replaced. The constants carry the
// reschedule prefix so that they never read as the evaluation's time (Now).
type rescheduleTiming uint8

const (
	// rescheduleNever: out of attempts (or rescheduling disabled); the alloc
	// keeps its slot, failed, until the job changes.
	rescheduleNever rescheduleTiming = iota
	// rescheduleNow: replace it in this evaluation.
	rescheduleNow
	// rescheduleLater: replace it at a time in the future; a follow-up eval
	// is needed.
	rescheduleLater
	// rescheduleWaiting: a follow-up eval for it is already pending.
	rescheduleWaiting
)

// rescheduleDecision is what the policy says about one failed alloc.
type rescheduleDecision struct {
	timing rescheduleTiming
	at     time.Time     // when it is due (rescheduleLater, rescheduleWaiting)
	delay  time.Duration // the delay applied, recorded in the tracker
}

// rescheduleCheck holds what deciding a reschedule needs besides the alloc.
type rescheduleCheck struct {
	policy *structs.ReschedulePolicy
	now    time.Time
	evalID string
	// pendingEval reports whether an eval of the job with this ID is still
	// pending, so an alloc whose follow-up eval vanished is not stuck.
	pendingEval func(id string) bool
}

// decide applies the reschedule policy to a failed alloc.
//
// Attempts are counted over the whole chain of replacements (the tracker
// travels with every replacement, whether its predecessor failed, was lost
// or was disconnected), within the policy interval before the failure.
func (r rescheduleCheck) decide(a *structs.Allocation) rescheduleDecision {
	if a.DesiredTransition.ShouldForceReschedule() {
		return rescheduleDecision{timing: rescheduleNow}
	}
	p := r.policy
	if !p.Enabled() {
		return rescheduleDecision{timing: rescheduleNever}
	}
	failed := failedAt(a, r.now)
	if !p.Unlimited && attemptsWithin(a.RescheduleTracker, failed, p.Interval) >= p.Attempts {
		return rescheduleDecision{timing: rescheduleNever}
	}
	delay := nextDelay(a.RescheduleTracker, p, failed)
	at := failed.Add(delay)
	switch {
	case a.FollowupEvalID != "" && a.FollowupEvalID == r.evalID:
		return rescheduleDecision{timing: rescheduleNow, at: at, delay: delay}
	case !at.After(r.now.Add(rescheduleNowWindow)):
		return rescheduleDecision{timing: rescheduleNow, at: at, delay: delay}
	case a.FollowupEvalID != "" && r.pendingEval != nil && r.pendingEval(a.FollowupEvalID):
		return rescheduleDecision{timing: rescheduleWaiting, at: at, delay: delay}
	}
	return rescheduleDecision{timing: rescheduleLater, at: at, delay: delay}
}

// failedAt is when the alloc failed: the last task finish its client
// reported, else the alloc's last modification, else now.
func failedAt(a *structs.Allocation, now time.Time) time.Time {
	var t time.Time
	for _, ts := range a.TaskStates {
		if ts != nil && ts.FinishedAt.After(t) {
			t = ts.FinishedAt
		}
	}
	if t.IsZero() && a.ModifyTime > 0 {
		t = time.Unix(0, a.ModifyTime)
	}
	if t.IsZero() {
		t = now
	}
	return t
}

// attemptsWithin counts the tracker's events in the interval before t.
func attemptsWithin(tr *structs.RescheduleTracker, t time.Time, interval time.Duration) int {
	if tr == nil {
		return 0
	}
	from := t.Add(-interval).UnixNano()
	n := 0
	for _, e := range tr.Events {
		if e.RescheduleTime > from {
			n++
		}
	}
	return n
}

// nextDelay returns the delay before the next reschedule of a chain whose
// history is tr and whose latest member failed at failed.
//
// constant always waits Delay; exponential doubles the last delay;
// fibonacci adds the last two. The result is never below Delay (events of
// lost or disconnected replacements record no delay and so restart the
// series) and never above MaxDelay when it is set. If the chain ran longer
// than the ceiling since its last reschedule, the failures are not
// consecutive and the series starts again from Delay.
func nextDelay(tr *structs.RescheduleTracker, p *structs.ReschedulePolicy, failed time.Time) time.Duration {
	base := p.Delay
	if tr == nil || len(tr.Events) == 0 {
		return base
	}
	ev := tr.Events
	last := ev[len(ev)-1]
	d := base
	switch p.DelayFunction {
	case structs.DelayFunctionExponential:
		d = last.Delay * 2
	case structs.DelayFunctionFibonacci:
		d = last.Delay
		if len(ev) >= 2 {
			d += ev[len(ev)-2].Delay
		}
	}
	if d < base {
		d = base
	}
	if p.MaxDelay > 0 && d > p.MaxDelay {
		d = p.MaxDelay
	}
	ceiling := p.MaxDelay
	if ceiling == 0 {
		ceiling = d
	}
	if failed.Sub(time.Unix(0, last.RescheduleTime)) > ceiling {
		d = base
	}
	return d
}

// carryTracker returns the tracker a replacement of prev carries: prev's
// history plus one event for this replacement. Old events that no longer
// count toward the policy are dropped, keeping at least the two the delay
// functions read.
func carryTracker(prev *structs.Allocation, p *structs.ReschedulePolicy, at time.Time, delay time.Duration) *structs.RescheduleTracker {
	t := prev.RescheduleTracker.Copy()
	if t == nil {
		t = &structs.RescheduleTracker{}
	}
	t.Events = append(t.Events, &structs.RescheduleEvent{
		RescheduleTime: at.UnixNano(),
		PrevAllocID:    prev.ID,
		PrevNodeID:     prev.NodeID,
		Delay:          delay,
	})
	keep := maxTrackedEvents
	if p != nil && !p.Unlimited && p.Interval > 0 {
		from := at.Add(-p.Interval).UnixNano()
		recent := 0
		for _, e := range t.Events {
			if e.RescheduleTime > from {
				recent++
			}
		}
		keep = max(recent, 2)
	}
	if len(t.Events) > keep {
		t.Events = append([]*structs.RescheduleEvent(nil), t.Events[len(t.Events)-keep:]...)
	}
	return t
}
