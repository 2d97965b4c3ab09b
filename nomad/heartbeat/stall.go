package heartbeat

import "time"

// A leader that stops running for a while (its process was stopped, its VM
// suspended, the machine swapped or stalled) wakes up to every heartbeat
// timer that fell due meanwhile firing at once. The clients did nothing
// wrong: their heartbeats were sent on time and sit unread in the leader's
// sockets. Marking them down would turn the leader's own silence into lost
// allocations and rescheduling churn across the fleet.
//
// So the heartbeater watches its own liveness and, when it finds it was not
// running, gives the nodes whose deadlines fell in that gap a fresh window
// instead of invalidating them. A node that still does not heartbeat in the
// fresh window is invalidated by its timer as usual.
//
// Evidence of a stall, each checked with mu held at every point where the
// heartbeater runs on its own schedule (a node timer firing, an expiry
// being processed, the watchdog):
//
//   - the watchdog, a timer that re-arms itself every stallTick, records
//     in lastSeen that the heartbeater ran; seeing lastSeen overdue by more
//     than the threshold means nothing ran in between;
//   - a node timer that fires later than its deadline by more than the
//     threshold.
//
// A processed expiry's own lateness is not evidence: the queue delays
// expiries on purpose (MaxNodeDownPerSecond), and a backlog of genuinely
// silent nodes must not read as a stall.
//
// All of this is the leader's own reckoning, outside raft: a status it
// decides reaches the FSM with its time in the log entry, as before.
//
// With a clock.Fake, Advance runs every timer at its own deadline, watchdog
// included, so it models time passing with the leader running; a stall is
// modelled by moving the clock first and firing the overdue timers after.

const (
	// minStallThreshold is the least lateness taken as a stall. Go timers
	// on a busy two-core machine run tens, at worst hundreds, of
	// milliseconds late; seconds of lateness mean the process did not run
	// (SIGSTOP, a suspended VM, a swap storm).
	minStallThreshold = 2 * time.Second

	// MaxStallWindows bounds the fresh windows a node may get in a row
	// without heartbeating (a heartbeat resets the count). It is enough to
	// ride out a few stalls back to back; the bound keeps a leader whose
	// timers are always late (overloaded rather than paused) marking dead
	// nodes down, at most that many windows late.
	MaxStallWindows = 3
)

// stallThreshold is how late the heartbeater must run to call it a stall:
// the heartbeat grace, but at least minStallThreshold. A stall shorter
// than the grace cannot cost a node its deadline on its own: a heartbeat
// that arrived during it is read before the deadline it was sent for,
// which lies a grace later. So only longer stalls need telling apart from
// the node's silence, and requiring that much lateness keeps an ordinary
// slow timer from delaying a dead node's invalidation.
func (h *Heartbeater) stallThreshold() time.Duration {
	return max(h.cfg.HeartbeatGrace, minStallThreshold)
}

// stallTick is the watchdog's period: a quarter of the threshold, so any
// gap longer than the threshold plus a quarter of it is seen as a stall.
func (h *Heartbeater) stallTick() time.Duration { return h.stallThreshold() / 4 }

// stallRecord is the heartbeater's latest stall: from and until bound the
// time it did not run (from may be up to one stallTick early).
type stallRecord struct {
	from, until time.Time
	late        time.Duration // how late the latest timer ran
	granted     int           // nodes given a fresh window for it
	reported    bool
}

func (r *stallRecord) active() bool { return !r.until.IsZero() }

// covers reports whether a timer deadline lies where the stall may have
// hidden the node's heartbeat: inside the stall, or within a grace after
// it, since a heartbeat for such a deadline was sent while the leader was
// not reading (clients send theirs at least a grace before the deadline).
func (r *stallRecord) covers(deadline time.Time, grace time.Duration) bool {
	return r.active() && !deadline.Before(r.from) && deadline.Before(r.until.Add(grace))
}

// startWatchdogLocked starts a term's watchdog. mu is held.
func (h *Heartbeater) startWatchdogLocked() {
	h.term++
	h.lastSeen = h.clock.Now()
	h.stall = stallRecord{}
	h.armWatchdogLocked()
}

func (h *Heartbeater) armWatchdogLocked() {
	term := h.term
	h.watchdog = h.clock.AfterFunc(h.stallTick(), func() { h.watch(term) })
}

// stopWatchdogLocked ends the term's watchdog, reporting a stall it had
// not reported yet (a stalled leader often loses its leadership over it).
func (h *Heartbeater) stopWatchdogLocked() {
	h.term++
	if h.watchdog != nil {
		h.watchdog.Stop()
		h.watchdog = nil
	}
	h.reportStallLocked()
	h.stall = stallRecord{}
}

// watch is the watchdog's tick: it records that the heartbeater runs,
// reports a stall once no more of its nodes can be due, and re-arms.
func (h *Heartbeater) watch(term uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.enabled || term != h.term {
		return
	}
	now := h.clock.Now()
	h.observeLocked(now, time.Time{})
	if h.stall.active() && !now.Before(h.stall.until.Add(h.cfg.HeartbeatGrace)) {
		h.reportStallLocked()
	}
	h.armWatchdogLocked()
}

// observeLocked looks for a stall at a moment the heartbeater runs: a gap
// since lastSeen, or, for a node timer firing, lateness past its deadline
// (due is zero otherwise). Then it records that the heartbeater runs now.
func (h *Heartbeater) observeLocked(now, due time.Time) {
	threshold := h.stallThreshold()
	if late := now.Sub(h.lastSeen) - h.stallTick(); late > threshold {
		h.recordStallLocked(h.lastSeen, now, late)
	}
	if !due.IsZero() {
		if late := now.Sub(due); late > threshold {
			h.recordStallLocked(due, now, late)
		}
	}
	if now.After(h.lastSeen) {
		h.lastSeen = now
	}
}

// recordStallLocked adds a gap to the current stall record, or starts a
// new record when the gap begins after the old one stopped covering
// deadlines.
func (h *Heartbeater) recordStallLocked(from, until time.Time, late time.Duration) {
	s := &h.stall
	if s.active() && !from.After(s.until.Add(h.cfg.HeartbeatGrace)) {
		if from.Before(s.from) {
			s.from = from
		}
		if until.After(s.until) {
			s.until = until
		}
		s.late = max(s.late, late)
		return
	}
	h.reportStallLocked()
	*s = stallRecord{from: from, until: until, late: late}
}

// stallWindowLocked gives the node a fresh window instead of letting it
// expire, if the current stall covers the deadline it missed and it has
// windows left. It reports whether it did.
func (h *Heartbeater) stallWindowLocked(nodeID string, deadline time.Time, windows int) bool {
	if windows >= MaxStallWindows || !h.stall.covers(deadline, h.cfg.HeartbeatGrace) {
		return false
	}
	h.armLocked(nodeID, h.freshWindowLocked(), windows+1)
	h.stall.granted++
	return true
}

// freshWindowLocked is the window a node gets after a stall: the longest
// TTL a heartbeat could be given for the current fleet, plus grace, so a
// client whose heartbeat was lost in the stall has a full period to send
// another.
func (h *Heartbeater) freshWindowLocked() time.Duration {
	return 2*h.baseTTL(len(h.timers)) + h.cfg.HeartbeatGrace
}

// reportStallLocked logs the current stall once. It runs with mu held,
// which is fine once per stall.
func (h *Heartbeater) reportStallLocked() {
	s := &h.stall
	if !s.active() || s.reported {
		return
	}
	s.reported = true
	h.logger.Warn("this server stalled: its heartbeat timers ran late, so nodes whose deadlines fell in the stall get a new window instead of being marked down",
		"timers_late_by", s.late.Round(time.Millisecond), "stalled_for", s.until.Sub(s.from).Round(time.Millisecond),
		"nodes_given_new_window", s.granted, "window", h.freshWindowLocked())
}
