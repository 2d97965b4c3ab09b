package nomad

import (
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// heldFuture is an apply future raft has not answered: Error waits for
// answer, which a test may never send.
type heldFuture struct {
	raft.ApplyFuture
	answer chan error
}

func (f heldFuture) Error() error { return <-f.answer }

// A future raft never answers ends when raft stops, with
// raft.ErrRaftShutdown; one raft answers gives its answer.
func TestAnUnansweredApplyFutureEndsWhenRaftStops(t *testing.T) {
	stopped := make(chan struct{})
	held := heldFuture{answer: make(chan error)}
	got := make(chan error, 1)
	go func() { got <- stoppableFuture{ApplyFuture: held, stopped: stopped}.Error() }()
	select {
	case err := <-got:
		t.Fatalf("Error returned %v before raft answered or stopped", err)
	case <-time.After(50 * time.Millisecond):
		// Still waiting, as it must: nothing has happened yet. (A
		// bounded look for a wrong early answer, not synchronisation.)
	}
	close(stopped)
	select {
	case err := <-got:
		if !errors.Is(err, raft.ErrRaftShutdown) {
			t.Fatalf("got %v, want raft.ErrRaftShutdown", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an unanswered future still waits after raft stopped")
	}

	// An answer raft gave is the answer, raft stopped since or not.
	want := errors.New("the FSM's answer")
	for _, stop := range []bool{false, true} {
		ch := make(chan struct{})
		if stop {
			close(ch)
		}
		for range 100 {
			f := heldFuture{answer: make(chan error, 1)}
			f.answer <- want
			if err := (stoppableFuture{ApplyFuture: f, stopped: ch}).Error(); err != want {
				t.Fatalf("raft stopped %v: got %v, want raft's answer %v", stop, err, want)
			}
		}
	}
}

// Shutdown closes raftStopped once raft has stopped, so a handler waiting
// on an entry is released before the RPC server waits for its handlers.
func TestShutdownReleasesApplyFuturesOnceRaftStops(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	select {
	case <-s.raftStopped:
		t.Fatal("raftStopped is closed while raft runs")
	default:
	}
	if err := s.Shutdown(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.raftStopped:
	default:
		t.Fatal("raftStopped is open after Shutdown")
	}
}
