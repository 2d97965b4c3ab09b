package clock

import (
	"sort"
	"sync"
	"time"
)

// Fake is a manually driven clock for tests. Time stands still until Advance
// or Set moves it; every After whose deadline has been reached then fires,
// in deadline order.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	waiters []*waiter
	// changed is closed and replaced whenever a waiter is added, so
	// BlockUntil can wait without polling.
	changed chan struct{}
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

// NewFake returns a fake clock set to start. A zero start means a fixed,
// arbitrary date, so tests do not depend on the wall clock at all.
func NewFake(start time.Time) *Fake {
	if start.IsZero() {
		start = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return &Fake{now: start, changed: make(chan struct{})}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// After returns a channel that fires once the fake time reaches now+d. A
// non-positive d fires at once.
func (f *Fake) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- f.now
		return ch
	}
	f.waiters = append(f.waiters, &waiter{at: f.now.Add(d), ch: ch})
	close(f.changed)
	f.changed = make(chan struct{})
	return ch
}

// Advance moves the time forward by d and fires every waiter that is due.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.setLocked(f.now.Add(d))
	f.mu.Unlock()
}

// Set moves the time to t (never backwards) and fires due waiters.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	if t.After(f.now) {
		f.setLocked(t)
	}
	f.mu.Unlock()
}

func (f *Fake) setLocked(t time.Time) {
	f.now = t
	sort.SliceStable(f.waiters, func(i, j int) bool { return f.waiters[i].at.Before(f.waiters[j].at) })
	keep := f.waiters[:0]
	for _, w := range f.waiters {
		if !w.at.After(t) {
			w.ch <- t
			continue
		}
		keep = append(keep, w)
	}
	for i := len(keep); i < len(f.waiters); i++ {
		f.waiters[i] = nil
	}
	f.waiters = keep
}

// Waiters returns how many After channels have not fired yet. Abandoned
// channels count too, so tests should compare with the number they expect
// at least, not exactly.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}

// BlockUntil waits until at least n waiters are pending or the timeout (of
// real time) runs out, and reports whether n was reached. Tests call it to
// know that the loop under test is parked on the clock before advancing it.
func (f *Fake) BlockUntil(n int, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		have, changed := len(f.waiters), f.changed
		f.mu.Unlock()
		if have >= n {
			return true
		}
		select {
		case <-changed:
		case <-deadline.C:
			return false
		}
	}
}
