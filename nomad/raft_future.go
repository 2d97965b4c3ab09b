package nomad

import (
	"time"

	"github.com/hashicorp/raft"
)

// A raft apply future can go unanswered for good. hashicorp/raft answers
// an Apply's future from its FSM goroutine once the entry is applied, and
// that goroutine stops at shutdown without answering the entries still
// queued for it (hashicorp/raft#498); the future's Error then waits
// forever. An RPC handler waiting there held the server's Shutdown, which
// waits for every handler, with it (seen under load with a three-server
// cluster losing its leader).
//
// So every future the server waits on also ends when raft has stopped:
// the entry's fate is then unknown to this server, and the caller is told
// raft shut down, as it is for an Apply made after the shutdown.

// stoppableFuture is an apply future whose Error returns
// raft.ErrRaftShutdown once stopped closes, answered or not.
type stoppableFuture struct {
	raft.ApplyFuture
	stopped <-chan struct{}
}

func (f stoppableFuture) Error() error {
	answered := make(chan error, 1)
	go func() { answered <- f.ApplyFuture.Error() }()
	select {
	case err := <-answered:
		return err
	case <-f.stopped:
		// raft may have answered before it stopped, and the goroutine
		// not yet passed the answer on: a committed write must not be
		// reported as lost, so it gets a moment to.
		select {
		case err := <-answered:
			return err
		case <-time.After(stoppedAnswerGrace):
			return raft.ErrRaftShutdown
		}
	}
}

// stoppedAnswerGrace is how long a future whose raft has stopped is given
// to show an answer raft gave before it stopped. raft's goroutines have
// all returned by then, so an answer is in the future already; the wait
// is only for the goroutine that reads it to be scheduled.
const stoppedAnswerGrace = 100 * time.Millisecond
