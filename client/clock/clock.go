package clock

import "time"

// Clock is the subset of the time package the client uses. After is the only
// way to wait: loops select on it together with their context, so a waiting
// goroutine can always be cancelled.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After returns a channel that receives the time once d has elapsed.
	// The channel has a buffer of one, so nobody has to read it.
	After(d time.Duration) <-chan time.Time
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// After returns time.After(d). Since Go 1.23 an unread, unreferenced timer
// is collected, so loops that abandon an After channel do not leak it.
func (Real) After(d time.Duration) <-chan time.Time { return time.After(d) }

// OrReal returns c, or Real when c is nil, so configs can leave it unset.
func OrReal(c Clock) Clock {
	if c == nil {
		return Real{}
	}
	return c
}
