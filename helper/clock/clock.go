// Package clock is the time source of every loop that waits in Drover: the
// leader's components (eval broker nack timers, delayed evals, blocked-eval
// loops, worker backoff, the drainer, the deployment watcher, GC) and every
// client loop (heartbeats, alloc update batching, restart delays, kill
// timeouts, GC, log following).
//
// Such code never calls time.Now, time.After or time.Sleep directly; it
// asks a Clock. Production code uses Real; tests use Fake and move time
// forward explicitly with Advance, after waiting (WaitForTimers) for the
// loop under test to be parked on the clock. That makes a test of "restart
// after 15 s" or "mark the node down after its TTL" run instantly and
// deterministically, without time.Sleep (STYLE.md, 5).
//
// Ownership: a Fake's timers are guarded by its mutex; any goroutine may
// call any method.
package clock

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// Clock is the source of time, injected so tests drive it with a Fake.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After returns a channel that receives the time once d has elapsed
	// (at once for d <= 0). The channel has a buffer of one, so nobody
	// has to read it: loops select on it together with their context,
	// so a waiting goroutine can always be cancelled.
	After(d time.Duration) <-chan time.Time
	// AfterFunc calls f on its own goroutine (realClock) or synchronously
	// from Advance (Fake) once d has elapsed.
	AfterFunc(d time.Duration, f func()) Timer
	// NewTimer returns a timer whose channel receives the time once d has
	// elapsed, for code that waits in a select.
	NewTimer(d time.Duration) Timer
	// AfterFuncAt calls f once the clock reads when or later, at once
	// (on its own goroutine) if it already does. Code that waits for a
	// moment (a deadline, a WaitUntil) arms at the moment, not at a
	// duration measured from an earlier Now: time may move between the
	// two (a Fake's Advance, a descheduled goroutine), and a timer
	// measured from a stale Now fires that much late, or, on a Fake
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

// Sleep waits d on c and reports whether ctx is still live.
func Sleep(ctx context.Context, c Clock, d time.Duration) bool {
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

// Real returns the wall clock.
func Real() Clock { return realClock{} }

// OrReal returns c, or Real when c is nil, so configs can leave it unset.
func OrReal(c Clock) Clock {
	if c == nil {
		return Real()
	}
	return c
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// After is time.After. Since Go 1.23 an unread, unreferenced timer is
// collected, so loops that abandon an After channel do not leak it.
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

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

// Fake is a manually driven Clock for tests. Time stands still until
// Advance or Set moves it; Advance fires every timer that falls due, in
// order of deadline and then of creation, on the caller's goroutine, so a
// test knows that every callback has run when Advance returns. A timer's
// channel receives its deadline.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	seq     uint64
	timers  fakeTimerHeap
	changed chan struct{} // closed and replaced whenever a timer is armed
}

// NewFake returns a Fake that reads start. A zero start means a fixed,
// arbitrary date, so tests do not depend on the wall clock at all.
func NewFake(start time.Time) *Fake {
	if start.IsZero() {
		start = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return &Fake{now: start, changed: make(chan struct{})}
}

// After arms a timer whose channel receives the time once Advance passes
// now+d; for d <= 0 it has received it already.
func (c *Fake) After(d time.Duration) <-chan time.Time {
	return c.NewTimerAt(c.Now().Add(d)).C()
}

// Set moves the time to t (never backwards), firing due timers.
func (c *Fake) Set(t time.Time) {
	if d := t.Sub(c.Now()); d > 0 {
		c.Advance(d)
	}
}

// Now returns the fake time.
func (c *Fake) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arms a timer that calls f when Advance passes its deadline.
func (c *Fake) AfterFunc(d time.Duration, f func()) Timer {
	t := &fakeTimer{clock: c, f: f, index: -1}
	t.Reset(d)
	return t
}

// NewTimer arms a timer that sends on its channel when Advance passes its
// deadline. The channel has room for one value, like time.Timer's.
func (c *Fake) NewTimer(d time.Duration) Timer {
	t := &fakeTimer{clock: c, ch: make(chan time.Time, 1), index: -1}
	t.Reset(d)
	return t
}

// AfterFuncAt arms a timer that calls f when Advance reaches when, or
// calls f at once on its own goroutine if the clock is already there.
func (c *Fake) AfterFuncAt(when time.Time, f func()) Timer {
	t := &fakeTimer{clock: c, f: f, index: -1}
	t.armAt(when)
	return t
}

// NewTimerAt arms a timer that sends on its channel when Advance reaches
// when, or at once if the clock is already there.
func (c *Fake) NewTimerAt(when time.Time) Timer {
	t := &fakeTimer{clock: c, ch: make(chan time.Time, 1), index: -1}
	t.armAt(when)
	return t
}

// Advance moves time forward by d, firing due timers one at a time. A timer
// armed by a callback also fires if it falls due within d.
func (c *Fake) Advance(d time.Duration) {
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

// Jump models the process not running for d: the time jumps, then every
// timer that fell due meanwhile fires late, at the new time, as timers do
// in a process that was stopped. (Advance instead fires each timer at its
// own deadline, as in a process that kept running.)
func (c *Fake) Jump(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	c.Advance(0)
}

// Pending returns how many timers are armed.
func (c *Fake) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// WaitForTimers blocks until at least n timers are armed or the deadline
// passes, and reports whether they are. Tests use it to know that a
// goroutine has reached its wait before advancing the clock.
func (c *Fake) WaitForTimers(n int, deadline time.Duration) bool {
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
	clock *Fake
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
