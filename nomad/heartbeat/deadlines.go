package heartbeat

import (
	"container/heap"
	"time"
)

// The heartbeater's node deadlines live in one min-heap with one clock
// timer, the wake, armed at the earliest of them, rather than a timer and
// a closure per node: at fleet size the per-node timers were a good part
// of the leader's heap per node, and a heartbeat, which nearly always
// moves a node's deadline later than the earliest, now only fixes the
// node's place in the heap.
//
// The wake is armed with Clock.AfterFuncAt at the earliest deadline and
// re-armed only when a deadline earlier than it arrives; a heartbeat that
// moves the earliest node later leaves it armed, and it finds nothing due
// and re-arms at the new earliest. When it fires it takes every deadline
// that is due, in order of deadline and then of arming (as separate timers
// fired under a clock.Fake), so each node's expiry is decided exactly as its
// own timer's was: the stall check sees the same lateness, and a node
// given a stall window stays in the heap with its new deadline.
//
// Everything here is under the heartbeater's mu.

// nodeDeadline is one node's place in the heap. The leader keeps one per
// node for as long as it leads, so it is kept small (40 bytes, where a
// time.Time and two ints made it 64): the deadline is an offset from the
// heartbeater's epoch, which keeps its order and, on the real clock, its
// monotonic reading.
type nodeDeadline struct {
	nodeID  string
	at      time.Duration // the deadline: epoch + at
	seq     uint64        // arming order: equal deadlines expire in it
	windows int32         // fresh windows in a row this deadline continues; 0 if a heartbeat or the term armed it
	index   int32         // position in the heap
}

// deadlineOf is nd's deadline as a time.
func (h *Heartbeater) deadlineOf(nd *nodeDeadline) time.Time { return h.epoch.Add(nd.at) }

// deadlineHeap orders node deadlines, earliest first.
type deadlineHeap []*nodeDeadline

func (q deadlineHeap) Len() int { return len(q) }
func (q deadlineHeap) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q deadlineHeap) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = int32(i), int32(j)
}
func (q *deadlineHeap) Push(x any) {
	nd := x.(*nodeDeadline)
	nd.index = int32(len(*q))
	*q = append(*q, nd)
}
func (q *deadlineHeap) Pop() any {
	old := *q
	nd := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return nd
}

// setDeadlineLocked sets the node's deadline, adding the node if it has
// none, and makes sure the wake comes by then.
func (h *Heartbeater) setDeadlineLocked(nodeID string, deadline time.Time, windows int) {
	h.seq++
	if nd, ok := h.timers[nodeID]; ok {
		nd.at, nd.windows, nd.seq = deadline.Sub(h.epoch), int32(windows), h.seq
		heap.Fix(&h.queue, int(nd.index))
	} else {
		// The deadline lives as long as the node: it keeps the store's
		// copy of the ID, not the one its registration decoded.
		nodeID = h.cfg.InternID(nodeID)
		nd := &nodeDeadline{nodeID: nodeID, at: deadline.Sub(h.epoch), windows: int32(windows), seq: h.seq}
		heap.Push(&h.queue, nd)
		h.timers[nodeID] = nd
	}
	h.scheduleWakeLocked()
}

// removeDeadlineLocked forgets the node's deadline, if it has one.
func (h *Heartbeater) removeDeadlineLocked(nodeID string) {
	nd, ok := h.timers[nodeID]
	if !ok {
		return
	}
	heap.Remove(&h.queue, int(nd.index))
	delete(h.timers, nodeID)
	h.scheduleWakeLocked()
}

// clearDeadlinesLocked forgets every deadline and stops the wake.
func (h *Heartbeater) clearDeadlinesLocked() {
	clear(h.timers)
	clear(h.queue)
	h.queue = h.queue[:0]
	h.stopWakeLocked()
}

// scheduleWakeLocked arms the wake at the earliest deadline unless it is
// armed for then or earlier, and stops it when no deadline is left (so a
// clock.Fake counts no timer for an empty heartbeater). While the wake's
// own callback runs it arms nothing: the callback arms it once done.
func (h *Heartbeater) scheduleWakeLocked() {
	if h.waking {
		return
	}
	if len(h.queue) == 0 {
		h.stopWakeLocked()
		return
	}
	next := h.deadlineOf(h.queue[0])
	if h.wake != nil && !h.wakeAt.After(next) {
		return
	}
	h.stopWakeLocked()
	h.wakeGen++
	gen := h.wakeGen
	h.wakeAt = next
	h.wake = h.clock.AfterFuncAt(next, func() { h.fire(gen) })
}

func (h *Heartbeater) stopWakeLocked() {
	if h.wake != nil {
		h.wake.Stop()
		h.wake = nil
	}
	h.wakeGen++ // a callback already running for the stopped wake is ignored
}

// fire is the wake's callback: every node whose deadline is due is queued
// for invalidation, unless its deadline fell in (or just after) a stall of
// the heartbeater's own, which earns the node a fresh window instead. A
// wake that was replaced or stopped after it started firing is ignored.
func (h *Heartbeater) fire(gen uint64) {
	h.mu.Lock()
	if gen != h.wakeGen || !h.enabled {
		h.mu.Unlock()
		return
	}
	h.wake = nil
	now := h.clock.Now()
	var due []expiry
	h.waking = true
	for len(h.queue) > 0 && !h.deadlineOf(h.queue[0]).After(now) {
		nd := h.queue[0]
		deadline := h.deadlineOf(nd)
		h.observeLocked(now, deadline)
		if h.stallWindowLocked(nd.nodeID, deadline, int(nd.windows)) {
			continue // its deadline moved past now
		}
		heap.Pop(&h.queue)
		delete(h.timers, nd.nodeID)
		due = append(due, expiry{nodeID: nd.nodeID, deadline: deadline, windows: int(nd.windows)})
	}
	h.waking = false
	h.scheduleWakeLocked()
	h.mu.Unlock()
	for _, e := range due {
		select {
		case h.expired <- e:
		default:
			// The queue is full: look again shortly, unless the node
			// heartbeated meanwhile.
			h.mu.Lock()
			if _, ok := h.timers[e.nodeID]; !ok {
				h.armLocked(e.nodeID, time.Second, e.windows)
			}
			h.mu.Unlock()
		}
	}
}
