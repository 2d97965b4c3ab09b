package nomad

import (
	"sync"
	"time"
)

// A fleet's clients each hold a blocking query open at all times (their
// Node.GetClientAllocs), most for the default five minutes. A timer per
// waiter was a few hundred bytes of the server's heap per node; instead,
// long waits share one channel per second of deadline, closed by one
// timer for all the waiters whose deadline falls in that second.
//
// A shared deadline is rounded up to the next whole second, so a wait ends
// up to a second after its MaxQueryTime. Only waits of at least
// sharedDeadlineMinWait share, where that second is within the 1/16 of
// the wait that Nomad's servers add as jitter anyway; a shorter wait gets a
// timer of its own and ends on time.

const (
	// sharedDeadlineStep is how finely shared deadlines are kept.
	sharedDeadlineStep = time.Second
	// sharedDeadlineMinWait is the shortest wait that shares a deadline.
	sharedDeadlineMinWait = 16 * sharedDeadlineStep
)

// sharedDeadlines hands out channels that close at a deadline. Its zero
// value is ready to use. Deadlines are counted on the monotonic clock from
// the first one handed out, so a wall clock step does not move them.
type sharedDeadlines struct {
	mu    sync.Mutex
	base  time.Time
	steps map[int64]chan struct{} // by sharedDeadlineStep since base
}

// until returns a channel that closes at deadline or up to a second after
// it (a wait of at least sharedDeadlineMinWait), or at deadline (a shorter
// one), and the function that releases what it holds for a caller done
// waiting before then.
func (d *sharedDeadlines) until(deadline time.Time, wait time.Duration) (<-chan struct{}, func()) {
	if wait < sharedDeadlineMinWait {
		ch := make(chan struct{})
		t := time.AfterFunc(time.Until(deadline), func() { close(ch) })
		return ch, func() { t.Stop() }
	}
	return d.at(deadline), func() {}
}

// at returns the channel shared by every deadline in deadline's step; it
// closes at the step's end.
func (d *sharedDeadlines) at(deadline time.Time) <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.steps == nil {
		d.base = time.Now()
		d.steps = map[int64]chan struct{}{}
	}
	off := deadline.Sub(d.base)
	step := int64((off + sharedDeadlineStep - 1) / sharedDeadlineStep)
	if ch, ok := d.steps[step]; ok {
		return ch
	}
	ch := make(chan struct{})
	d.steps[step] = ch
	end := d.base.Add(time.Duration(step) * sharedDeadlineStep)
	time.AfterFunc(time.Until(end), func() {
		d.mu.Lock()
		delete(d.steps, step)
		d.mu.Unlock()
		close(ch)
	})
	return ch
}

// pending reports how many steps have waiters' channels open.
func (d *sharedDeadlines) pending() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.steps)
}
