package clock

import (
	"reflect"
	"testing"
	"time"
)

var testEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestFake_FiresDueTimersInDeadlineOrder(t *testing.T) {
	c := NewFake(testEpoch)
	var fired []string
	c.AfterFunc(3*time.Second, func() { fired = append(fired, "3s") })
	c.AfterFunc(time.Second, func() {
		fired = append(fired, "1s")
		// A timer armed by a callback fires in the same Advance if due.
		c.AfterFunc(time.Second, func() { fired = append(fired, "1s+1s@"+c.Now().Sub(testEpoch).String()) })
	})
	stopped := c.AfterFunc(2*time.Second, func() { fired = append(fired, "stopped") })
	reset := c.AfterFunc(time.Hour, func() { fired = append(fired, "reset") })
	ch := c.NewTimer(2500 * time.Millisecond)

	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop should report pending exactly once")
	}
	if !reset.Reset(2500 * time.Millisecond) {
		t.Fatal("Reset of a pending timer should report it was pending")
	}
	c.Advance(2500 * time.Millisecond)
	want := []string{"1s", "1s+1s@2s", "reset"}
	if !reflect.DeepEqual(fired, want) {
		t.Fatalf("fired %v, want %v", fired, want)
	}
	select {
	case got := <-ch.C():
		if !got.Equal(testEpoch.Add(2500 * time.Millisecond)) {
			t.Fatalf("timer sent %v", got)
		}
	default:
		t.Fatal("channel timer did not fire")
	}
	if c.Pending() != 1 || !c.Now().Equal(testEpoch.Add(2500*time.Millisecond)) {
		t.Fatalf("pending=%d now=%v", c.Pending(), c.Now())
	}
	c.Advance(time.Second)
	if fired[len(fired)-1] != "3s" {
		t.Fatalf("fired %v", fired)
	}
}

// A timer armed at a moment fires when Advance reaches that moment, however
// far time moved between the caller reading Now and arming it; a moment
// already passed fires at once. Armed as a duration from a stale Now, the
// same wait would land past the test's one Advance and never fire.
func TestFake_ArmsAtAMoment(t *testing.T) {
	c := NewFake(testEpoch)
	deadline := c.Now().Add(10 * time.Minute) // read before the jump
	c.Advance(5 * time.Minute)

	fired := make(chan time.Time, 1)
	c.AfterFuncAt(deadline, func() { fired <- c.Now() })
	ch := c.NewTimerAt(deadline)
	c.Advance(5 * time.Minute)
	select {
	case at := <-fired:
		if !at.Equal(deadline) {
			t.Fatalf("fired at %v, want %v", at, deadline)
		}
	default:
		t.Fatal("AfterFuncAt did not fire when the clock reached its moment")
	}
	select {
	case <-ch.C():
	default:
		t.Fatal("NewTimerAt did not fire when the clock reached its moment")
	}

	// Already passed: no Advance needed.
	late := make(chan struct{})
	if c.AfterFuncAt(deadline.Add(-time.Second), func() { close(late) }).Stop() {
		t.Fatal("a timer for a passed moment is not pending")
	}
	select {
	case <-late:
	case <-time.After(10 * time.Second):
		t.Fatal("AfterFuncAt for a passed moment did not fire")
	}
	select {
	case <-c.NewTimerAt(deadline).C():
	default:
		t.Fatal("NewTimerAt for the current moment did not fire at once")
	}

	// A pending one can still be stopped.
	stopped := c.AfterFuncAt(deadline.Add(time.Hour), func() { t.Error("a stopped timer fired") })
	if !stopped.Stop() {
		t.Fatal("Stop of a pending timer should report it was pending")
	}
	c.Advance(2 * time.Hour)
}

func TestFakeAfterFiresInOrderWithItsDeadline(t *testing.T) {
	f := NewFake(time.Time{})
	start := f.Now()
	a := f.After(2 * time.Second)
	b := f.After(time.Second)
	if !f.WaitForTimers(2, time.Second) {
		t.Fatal("two timers should be pending")
	}
	f.Advance(1500 * time.Millisecond)
	select {
	case got := <-b:
		if got.Sub(start) != time.Second {
			t.Fatalf("fired with %v, want its deadline 1s", got.Sub(start))
		}
	default:
		t.Fatal("the 1s timer should have fired")
	}
	select {
	case <-a:
		t.Fatal("the 2s timer fired early")
	default:
	}
	f.Set(start.Add(2 * time.Second))
	<-a
	if f.Pending() != 0 {
		t.Fatalf("timers left: %d", f.Pending())
	}
}

func TestFakeAfterNonPositiveFiresAtOnce(t *testing.T) {
	f := NewFake(time.Time{})
	select {
	case <-f.After(0):
	default:
		t.Fatal("After(0) should fire immediately")
	}
	if f.Pending() != 0 {
		t.Fatal("a timer that fired at once must not stay pending")
	}
}

func TestWaitForTimersTimesOut(t *testing.T) {
	f := NewFake(time.Time{})
	if f.WaitForTimers(1, 10*time.Millisecond) {
		t.Fatal("no timer was armed")
	}
}

// Jump fires what fell due late, at the new time; Advance at each deadline.
func TestJumpFiresDueTimersAtTheNewTime(t *testing.T) {
	c := NewFake(testEpoch)
	ch := c.NewTimer(time.Second)
	var at time.Time
	c.AfterFunc(2*time.Second, func() { at = c.Now() })
	c.Jump(5 * time.Second)
	if got := (<-ch.C()).Sub(testEpoch); got != 5*time.Second {
		t.Errorf("the timer fired with %v, want the new time 5s", got)
	}
	if at.Sub(testEpoch) != 5*time.Second {
		t.Errorf("the callback ran at %v, want 5s", at.Sub(testEpoch))
	}
}
