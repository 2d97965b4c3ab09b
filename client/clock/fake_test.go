package clock

import (
	"testing"
	"time"
)

func TestFakeFiresWaitersInOrderWhenAdvanced(t *testing.T) {
	f := NewFake(time.Time{})
	start := f.Now()
	a := f.After(2 * time.Second)
	b := f.After(time.Second)
	if !f.BlockUntil(2, time.Second) {
		t.Fatal("two waiters should be pending")
	}
	f.Advance(1500 * time.Millisecond)
	select {
	case got := <-b:
		if got.Sub(start) != 1500*time.Millisecond {
			t.Fatalf("fired at %v", got.Sub(start))
		}
	default:
		t.Fatal("the 1s waiter should have fired")
	}
	select {
	case <-a:
		t.Fatal("the 2s waiter fired early")
	default:
	}
	f.Advance(time.Second)
	<-a
	if f.Waiters() != 0 {
		t.Fatalf("waiters left: %d", f.Waiters())
	}
}

func TestFakeAfterNonPositiveFiresAtOnce(t *testing.T) {
	f := NewFake(time.Time{})
	select {
	case <-f.After(0):
	default:
		t.Fatal("After(0) should fire immediately")
	}
}

func TestBlockUntilTimesOut(t *testing.T) {
	f := NewFake(time.Time{})
	if f.BlockUntil(1, 10*time.Millisecond) {
		t.Fatal("no waiter was added")
	}
}
