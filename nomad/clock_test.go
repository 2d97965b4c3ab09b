package nomad

import (
	"reflect"
	"testing"
	"time"
)

func TestFakeClock_FiresDueTimersInDeadlineOrder(t *testing.T) {
	c := NewFakeClock(testEpoch)
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
