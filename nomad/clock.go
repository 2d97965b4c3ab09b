package nomad

import (
	"container/heap"
	"sync"
	"time"
)

// Clock is the source of time for the leader's components (eval broker nack
// timers, delayed evals, blocked-eval loops, worker backoff). It is injected
// so tests drive time with a FakeClock instead of sleeping (STYLE.md, 5).
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f on its own goroutine (realClock) or synchronously
	// from Advance (FakeClock) once d has elapsed.
	AfterFunc(d time.Duration, f func()) Timer
	// NewTimer returns a timer whose channel receives the time once d has
	// elapsed, for code that waits in a select.
	NewTimer(d time.Duration) Timer
	// AfterFuncAt calls f once the clock reads when or later, at once
	// (on its own goroutine) if it already does. Code that waits for a
	// moment (a deadline, a WaitUntil) arms at the moment, not at a
	// duration measured from an earlier Now: time may move between the
	// two (a FakeClock's Advance, a descheduled goroutine), and a timer
	// measured from a stale Now fires that much late, or, on a FakeClock
	// that a test advances once, never.
	AfterFuncAt(when time.Time, f func()) Timer
	// NewTimerAt is NewTimer for a moment rather than a duration.
	NewTimerAt(when time.Time) Timer
}

// Timer is the subset of *time.Timer the components use.
type Timer interface {
	// C is the channel of a timer made by NewTimer; nil for AfterFunc.
	C() <-chan time.Time
	// Stop prevents the timer from firing and reports whether it was
	// pending.
	Stop() bool
	// Reset makes the timer fire d from now and reports whether it was
	// pending.
	Reset(d time.Duration) bool
}

// RealClock returns the wall clock.
func RealClock() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) Timer {
	return realTimer{t: time.AfterFunc(d, f)}
}

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{t: time.NewTimer(d)} }

func (realClock) AfterFuncAt(when time.Time, f func()) Timer {
	return realTimer{t: time.AfterFunc(time.Until(when), f)}
}

func (realClock) NewTimerAt(when time.Time) Timer {
	return realTimer{t: time.NewTimer(time.Until(when))}
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

// FakeClock is a manually driven Clock for tests. Time stands still until
// Advance moves it; Advance fires every timer that falls due, in order of
// deadline and then of creation, on the caller's goroutine, so a test knows
// that every callback has run when Advance returns.
type FakeClock struct {
	mu      sync.Mutex
	now     time.Time
	seq     uint64
	timers  fakeTimerHeap
	changed chan struct{} // closed and replaced whenever a timer is armed
}

// NewFakeClock returns a FakeClock that reads start.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{now: start, changed: make(chan struct{})}
}

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arms a timer that calls f when Advance passes its deadline.
func (c *FakeClock) AfterFunc(d time.Duration, f func()) Timer {
	t := &fakeTimer{clock: c, f: f, index: -1}
	t.Reset(d)
	return t
}

// NewTimer arms a timer that sends on its channel when Advance passes its
// deadline. The channel has room for one value, like time.Timer's.
func (c *FakeClock) NewTimer(d time.Duration) Timer {
	t := &fakeTimer{clock: c, ch: make(chan time.Time, 1), index: -1}
	t.Reset(d)
	return t
}

// AfterFuncAt arms a timer that calls f when Advance reaches when, or
// calls f at once on its own goroutine if the clock is already there.
func (c *FakeClock) AfterFuncAt(when time.Time, f func()) Timer {
	t := &fakeTimer{clock: c, f: f, index: -1}
	t.armAt(when)
	return t
}

// NewTimerAt arms a timer that sends on its channel when Advance reaches
// when, or at once if the clock is already there.
func (c *FakeClock) NewTimerAt(when time.Time) Timer {
	t := &fakeTimer{clock: c, ch: make(chan time.Time, 1), index: -1}
	t.armAt(when)
	return t
}

// Advance moves time forward by d, firing due timers one at a time. A timer
// armed by a callback also fires if it falls due within d.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	target := c.now.Add(d)
	for len(c.timers) > 0 && !c.timers[0].when.After(target) {
		t := heap.Pop(&c.timers).(*fakeTimer)
		if t.when.After(c.now) {
			c.now = t.when
		}
		now := c.now
		c.mu.Unlock()
		t.fire(now)
		c.mu.Lock()
	}
	// Another goroutine's Advance may have run while a timer fired: time
	// never goes back.
	if target.After(c.now) {
		c.now = target
	}
	c.mu.Unlock()
}

// Pending returns how many timers are armed.
func (c *FakeClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// WaitForTimers blocks until at least n timers are armed or the deadline
// passes, and reports whether they are. Tests use it to know that a
// goroutine has reached its wait before advancing the clock.
func (c *FakeClock) WaitForTimers(n int, deadline time.Duration) bool {
	stop := time.NewTimer(deadline)
	defer stop.Stop()
	for {
		c.mu.Lock()
		have, changed := len(c.timers), c.changed
		c.mu.Unlock()
		if have >= n {
			return true
		}
		select {
		case <-changed:
		case <-stop.C:
			return false
		}
	}
}

type fakeTimer struct {
	clock *FakeClock
	f     func()
	ch    chan time.Time
	when  time.Time
	seq   uint64
	index int // position in the clock's heap, -1 when not armed
}

func (t *fakeTimer) fire(now time.Time) {
	if t.f != nil {
		t.f()
		return
	}
	select {
	case t.ch <- now:
	default:
	}
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&c.timers, t.index)
	return true
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	wasPending := t.index >= 0
	if wasPending {
		heap.Remove(&c.timers, t.index)
	}
	t.pushLocked(c.now.Add(d))
	return wasPending
}

// pushLocked puts t in the clock's heap for when and wakes WaitForTimers.
func (t *fakeTimer) pushLocked(when time.Time) {
	c := t.clock
	c.seq++
	t.when, t.seq = when, c.seq
	heap.Push(&c.timers, t)
	close(c.changed)
	c.changed = make(chan struct{})
}

// armAt arms t for when, read under the clock's lock so that no Advance
// can pass when between the caller's decision and the arming. A moment
// already reached fires at once, as a real timer for a past moment does.
func (t *fakeTimer) armAt(when time.Time) {
	c := t.clock
	c.mu.Lock()
	if t.index >= 0 {
		heap.Remove(&c.timers, t.index)
	}
	if !when.After(c.now) {
		now := c.now
		c.mu.Unlock()
		if t.f != nil {
			go t.f()
		} else {
			t.fire(now)
		}
		return
	}
	t.pushLocked(when)
	c.mu.Unlock()
}

// fakeTimerHeap orders timers by deadline, then by arming order, so that
// Advance is deterministic.
type fakeTimerHeap []*fakeTimer

func (h fakeTimerHeap) Len() int { return len(h) }
func (h fakeTimerHeap) Less(i, j int) bool {
	if !h[i].when.Equal(h[j].when) {
		return h[i].when.Before(h[j].when)
	}
	return h[i].seq < h[j].seq
}
func (h fakeTimerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *fakeTimerHeap) Push(x any) {
	t := x.(*fakeTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *fakeTimerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}
