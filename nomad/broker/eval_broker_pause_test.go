package broker

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A paused broker keeps taking evals (new, delayed and nacked ones become
// ready as usual) but hands none out; resuming hands them out in the
// usual order.
func TestBroker_PauseHoldsEvalsBackAndResumeHandsThemOut(t *testing.T) {
	b, clock := newTestBroker(t)
	held := testEval("held", 50, 1)
	b.Enqueue(held)
	tok := mustDequeue(t, b, held)

	b.SetPaused(true)
	if !b.Paused() {
		t.Fatal("Paused() must report the pause")
	}
	low := testEval("low", 10, 2)
	high := testEval("high", 90, 3)
	delayed := testEval("delayed", 50, 4)
	delayed.WaitUntil = testEpoch.Add(time.Minute)
	b.Enqueue(low)
	b.Enqueue(high)
	b.Enqueue(delayed)
	// The eval handed out before the pause is its worker's to finish.
	if err := b.Nack(held.ID, tok); err != nil {
		t.Fatalf("a paused broker must still take a nack: %v", err)
	}
	clock.Advance(time.Minute) // past the nack delay and the delayed eval's time
	if s := b.Stats(); s.TotalReady != 4 || s.TotalUnacked != 0 || len(s.DelayedEvals) != 0 {
		t.Fatalf("while paused, evals must still become ready: %+v", s)
	}
	mustEmpty(t, b)

	b.SetPaused(false)
	mustDequeue(t, b, high)
	for range 3 {
		if e, _ := tryDequeue(t, b); e == nil {
			t.Fatal("after resuming, every ready eval must be handed out")
		}
	}
	mustEmpty(t, b)
}

// A Dequeue waiting on a paused broker is woken by the resume.
func TestBroker_ResumeWakesAWaitingDequeue(t *testing.T) {
	b, _ := newTestBroker(t)
	b.SetPaused(true)
	e := testEval("a", 50, 1)
	b.Enqueue(e)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make(chan string, 1)
	go func() {
		ev, _, err := b.Dequeue(ctx, []string{"service"})
		if err != nil {
			got <- err.Error()
			return
		}
		got <- ev.ID
	}()
	b.SetPaused(false)
	if id := <-got; id != e.ID {
		t.Fatalf("the waiting dequeue got %q, want eval %s", id, e.ID)
	}
}

// The pause follows the scheduler configuration, not leadership: it
// survives the broker being disabled and enabled again, and a failed read
// leaves it as it was.
func TestBroker_PauseOutlivesLeadershipChanges(t *testing.T) {
	b, _ := newTestBroker(t)
	if err := b.SyncPaused(func() (bool, error) { return true, nil }); err != nil {
		t.Fatal(err)
	}
	b.SetEnabled(false)
	b.SetEnabled(true)
	b.Enqueue(testEval("a", 50, 1))
	mustEmpty(t, b)
	if err := b.SyncPaused(func() (bool, error) { return false, errors.New("no state") }); err == nil || !b.Paused() {
		t.Fatalf("a failed read must be reported and change nothing (err %v, paused %v)", err, b.Paused())
	}
}
