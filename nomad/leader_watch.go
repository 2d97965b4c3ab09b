package nomad

import (
	"context"
	"sync"

	"github.com/hashicorp/raft"
)

// leaderWatch tells forwarded requests that the leader they were sent to
// is no longer the one raft knows. A leader that froze or was cut off
// never answers, and its connection stays open until yamux's keepalive
// gives up (about 40 s): without the watch, every request forwarded to it
// in that window waits that long, long after the others elected a new
// leader. With it, such a request ends as soon as this server's raft
// stops following the old leader (its heartbeat timeout).
type leaderWatch struct {
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
}

func newLeaderWatch() *leaderWatch {
	w := &leaderWatch{}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	return w
}

// current returns a context that is canceled when the leader next
// changes. Take it before reading the leader, so that a change between
// the two still cancels it.
func (w *leaderWatch) current() context.Context {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ctx
}

// changed cancels the current context and starts the next.
func (w *leaderWatch) changed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cancel()
	w.ctx, w.cancel = context.WithCancel(context.Background())
}

// leaderWatchBuffer holds leader observations raft sends while the
// watcher is busy; raft drops what does not fit rather than wait, and a
// dropped one only delays cancelling until the next change.
const leaderWatchBuffer = 16

// watchLeader registers an observer of raft's leader changes and feeds
// them to s.leaders until the server stops.
func (s *Server) watchLeader(r *raft.Raft) {
	ch := make(chan raft.Observation, leaderWatchBuffer)
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	r.RegisterObserver(obs)
	go func() {
		defer r.DeregisterObserver(obs)
		for {
			select {
			case <-ch:
				s.leaders.changed()
			case <-s.ctx.Done():
				return
			}
		}
	}()
}
