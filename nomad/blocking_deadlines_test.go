package nomad

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/testutil/wait"
)

// Long waits whose deadlines fall in the same second share one channel;
// it closes no earlier than any of their deadlines and at most a step
// after, and is forgotten once closed.
func TestLongWaitsShareADeadlinePerSecond(t *testing.T) {
	var d sharedDeadlines
	first := time.Now().Add(1500 * time.Millisecond)
	a, _ := d.until(first, sharedDeadlineMinWait)
	// Every deadline of a's step gets a's channel; the step's end is
	// within a step after first.
	var same int
	for off := -sharedDeadlineStep; off <= sharedDeadlineStep; off += 10 * time.Millisecond {
		if ch, _ := d.until(first.Add(off), sharedDeadlineMinWait); ch == a {
			same++
		}
	}
	if same == 0 || same > int(sharedDeadlineStep/(10*time.Millisecond))+1 {
		t.Fatalf("%d deadlines within a step either side share the first one's channel; want at most a step's worth and at least itself", same)
	}
	later, _ := d.until(first.Add(3*sharedDeadlineStep), sharedDeadlineMinWait)
	if later == a {
		t.Fatal("deadlines three steps apart share a channel")
	}
	select {
	case <-a:
		if now := time.Now(); now.Before(first) {
			t.Fatalf("the shared deadline closed %s before one of its waiters' deadlines", first.Sub(now))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the shared deadline never closed")
	}
	select {
	case <-later:
		t.Fatal("a later step closed with an earlier one")
	default:
	}
	<-later
	wait.Until(t, 10*time.Second, "closed steps to be forgotten", func() bool { return d.pending() == 0 })
}

// A wait too short to share gets its own timer: it ends on time (not up
// to a second late) and holds nothing in the shared steps.
func TestShortWaitsEndOnTime(t *testing.T) {
	var d sharedDeadlines
	deadline := time.Now().Add(50 * time.Millisecond)
	ch, stop := d.until(deadline, 50*time.Millisecond)
	defer stop()
	if d.pending() != 0 {
		t.Fatal("a short wait took a shared step")
	}
	select {
	case <-ch:
		if time.Now().Before(deadline) {
			t.Fatal("a short wait ended before its deadline")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a short wait never ended")
	}
	// A stopped short wait never closes.
	stopped, stop2 := d.until(time.Now().Add(20*time.Millisecond), 20*time.Millisecond)
	stop2()
	if wait.Holds(200*time.Millisecond, func() bool {
		select {
		case <-stopped:
			return true
		default:
			return false
		}
	}) {
		t.Fatal("a stopped wait closed")
	}
}
