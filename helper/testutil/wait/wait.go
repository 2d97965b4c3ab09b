package wait

import (
	"testing"
	"time"
)

// DefaultInterval is how often a condition is checked unless Every says
// otherwise: often enough that a test does not wait noticeably longer than
// the condition takes, rarely enough that polling does not load the
// machine the race detector already slows.
const DefaultInterval = 10 * time.Millisecond

// Option changes how a wait polls.
type Option func(*poller)

// Every sets how often the condition is checked. A condition that is
// expensive (an HTTP call, a CLI run) wants a longer interval; one that is
// a field read, a shorter one.
func Every(d time.Duration) Option {
	return func(p *poller) {
		if d > 0 {
			p.interval = d
		}
	}
}

// Stepping calls step between checks, for example to advance a fake clock
// so the loop under test moves towards the condition.
func Stepping(step func()) Option {
	return func(p *poller) { p.step = step }
}

type poller struct {
	interval time.Duration
	step     func()
}

// Poll checks cond until it holds or timeout has passed, and reports
// whether it held and the last reason cond gave. cond is checked at once,
// once per interval, and a last time when the timeout passes, so a wait
// never ends later than its timeout whatever the interval.
func Poll(timeout time.Duration, cond func() (bool, string), opts ...Option) (bool, string) {
	p := poller{interval: DefaultInterval}
	for _, o := range opts {
		o(&p)
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(p.interval)
	defer tick.Stop()
	for {
		ok, why := cond()
		if ok {
			return true, why
		}
		if p.step != nil {
			p.step()
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return cond()
		}
	}
}

// For checks cond until it holds, failing t with the last reason cond gave
// if it still does not hold after timeout.
func For(t testing.TB, timeout time.Duration, cond func() (bool, string), opts ...Option) {
	t.Helper()
	if ok, why := Poll(timeout, cond, opts...); !ok {
		t.Fatalf("condition not met after %s: %s", timeout, why)
	}
}

// Until checks cond until it is true, failing t with "timed out waiting
// for <what>" if it is still false after timeout.
func Until(t testing.TB, timeout time.Duration, what string, cond func() bool, opts ...Option) {
	t.Helper()
	if !Holds(timeout, cond, opts...) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// Holds is Poll for a plain boolean: it reports whether cond became true
// within timeout, without failing anything. It is for tests that assert a
// condition never comes about in a window.
func Holds(timeout time.Duration, cond func() bool, opts ...Option) bool {
	ok, _ := Poll(timeout, func() (bool, string) { return cond(), "" }, opts...)
	return ok
}
