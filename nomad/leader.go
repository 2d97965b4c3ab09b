package nomad

import (
	"context"
	"time"

	"github.com/drover-sched/drover/nomad/broker"
	"github.com/drover-sched/drover/structs"
)

// monitorLeadership starts the leader loops when this server becomes the
// raft leader and stops them when it stops being it. It is the only
// goroutine that calls establishLeadership and revokeLeadership (Shutdown
// calls revokeLeadership too, after this loop has returned).
func (s *Server) monitorLeadership() {
	leaderCh := s.raft.LeaderCh()
	for {
		select {
		case <-s.ctx.Done():
			return
		case isLeader := <-leaderCh:
			s.leadershipChanged(isLeader)
		}
	}
}

// leadershipChanged acts on one value from raft's LeaderCh. LeaderCh keeps
// only the newest value, so a true while this server already leads means
// it lost leadership and won it back in between: another server may have
// led meanwhile, so the old term's broker, plan queue and timers hold stale
// state. They are torn down and set up again from state, as on any gain.
func (s *Server) leadershipChanged(isLeader bool) {
	if !isLeader {
		s.revokeLeadership()
		return
	}
	if s.leading() {
		s.logger.Info("leadership lost and regained; re-establishing it")
		s.revokeLeadership()
	}
	if err := s.establishLeadership(); err != nil {
		s.revokeLeadership()
		if s.ctx.Err() != nil {
			return // shutting down
		}
		s.logger.Error("failed to establish leadership; stepping down", "error", err)
		if f := s.raft.LeadershipTransfer(); f.Error() != nil {
			s.logger.Warn("leadership transfer failed", "error", f.Error())
		}
	}
}

// leading reports whether the leader loops run.
func (s *Server) leading() bool {
	s.leaderMu.Lock()
	defer s.leaderMu.Unlock()
	return s.leaderCancel != nil
}

// establishLeadership makes this server's state current (a barrier waits
// until every entry of earlier terms is applied), stores the default
// scheduler configuration if the cluster has none and pauses the broker if
// the configuration says so, then enables the broker,
// blocked evals, plan queue and heartbeater, refills them from state, and
// starts the leader-only loops under a fresh leader context. Once Shutdown
// has cancelled the server's context it starts nothing.
func (s *Server) establishLeadership() error {
	if err := s.barrier(); err != nil {
		return err
	}
	s.leaderMu.Lock()
	defer s.leaderMu.Unlock()
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if s.leaderCancel != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(s.ctx)
	s.leaderCancel = cancel

	// The scheduler configuration comes first, so that a paused broker
	// hands out nothing from the evals restored below.
	if err := s.bootstrapSchedulerConfig(); err != nil {
		s.logger.Error("storing the default scheduler configuration failed; the next leader retries", "error", err)
	}
	if err := s.syncEvalBrokerPause(); err != nil {
		return err
	}
	// Followers' workers prove themselves with the server secret once
	// ACLs are on; until it exists they are refused and retry.
	if err := s.bootstrapServerSecret(); err != nil {
		s.logger.Error("making the server secret failed; retrying", "error", err)
		s.goLeader(ctx, s.retryServerSecret)
	}
	s.planQueue.SetEnabled(true)
	s.evalBroker.SetEnabled(true)
	s.blockedEvals.SetEnabled(true)
	if err := s.restoreEvals(); err != nil {
		return err
	}
	s.periodicDispatcher.SetEnabled(true)
	if err := s.periodicDispatcher.Restore(s.State()); err != nil {
		return err
	}

	s.goLeader(ctx, s.runPlanApplier)
	s.goLeader(ctx, func(ctx context.Context) { broker.ReapFailedEvals(ctx, s.evalBroker, s.evalWriter()) })
	s.goLeader(ctx, func(ctx context.Context) {
		broker.ReapCancelableEvals(ctx, s.evalBroker, s.blockedEvals, s.evalWriter())
	})
	s.goLeader(ctx, func(ctx context.Context) { broker.PeriodicUnblockFailed(ctx, s.blockedEvals, s.clock, time.Minute) })
	s.goLeader(ctx, s.heartbeats.Run)
	gcCfg := s.gcLoopConfig()
	s.goLeader(ctx, func(ctx context.Context) { runCoreGC(ctx, gcCfg) })
	// Deployment watcher (issue 13).
	s.goLeader(ctx, s.runDeploymentWatcher)
	// Node drainer (issue 14).
	s.goLeader(ctx, s.runDrainer)
	s.leaderReady.Store(true)
	s.logger.Info("cluster leadership acquired")
	return nil
}

// barrier waits until raft has applied every entry of earlier terms, or
// until the server shuts down. raft's Barrier blocks in raft until it
// resolves (at the latest when raft shuts down, which Shutdown does after
// this returns), so it runs on a goroutine owned by the server's group.
func (s *Server) barrier() error {
	done := make(chan error, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		done <- s.raft.Barrier(time.Minute).Error()
	}()
	select {
	case err := <-done:
		return err
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
}

// goLeader runs a leader loop owned by the leader context.
func (s *Server) goLeader(ctx context.Context, f func(context.Context)) {
	s.leaderWG.Add(1)
	go func() {
		defer s.leaderWG.Done()
		f(ctx)
	}()
}

// revokeLeadership stops the leader loops and empties the leader-only
// queues. Safe to call when not leading.
func (s *Server) revokeLeadership() {
	s.leaderMu.Lock()
	cancel := s.leaderCancel
	s.leaderCancel = nil
	s.leaderReady.Store(false)
	s.leaderMu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	s.leaderWG.Wait()
	s.periodicDispatcher.SetEnabled(false)
	s.evalBroker.SetEnabled(false)
	s.blockedEvals.SetEnabled(false)
	s.planQueue.SetEnabled(false)
	s.logger.Info("cluster leadership lost")
}

// restoreEvals re-enqueues every non-terminal eval from state: the broker
// and blocked evals lived only in the previous leader's memory.
func (s *Server) restoreEvals() error {
	it, err := s.State().Evals(nil)
	if err != nil {
		return err
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		eval := raw.(*structs.Evaluation)
		switch {
		case eval.ShouldEnqueue():
			s.evalBroker.Enqueue(eval)
		case eval.ShouldBlock():
			s.blockedEvals.Block(eval)
		}
	}
	return nil
}

// serverHooks connects FSM side effects to the leader's queues. On a
// follower the queues are disabled and ignore the calls.
type serverHooks struct{ s *Server }

func (h *serverHooks) EvalsUpserted(evals []*structs.Evaluation) {
	for _, e := range evals {
		switch {
		case e.ShouldEnqueue():
			h.s.evalBroker.Enqueue(e)
		case e.ShouldBlock():
			h.s.blockedEvals.Block(e)
		case e.Status == structs.EvalStatusComplete && len(e.FailedTGAllocs) == 0:
			// Everything placed: a blocked eval of the job is obsolete.
			h.s.blockedEvals.Untrack(e.Namespace, e.JobID)
		}
	}
}

func (h *serverHooks) CapacityChanged(nodeID, class string, index uint64) {
	h.s.blockedEvals.Unblock(class, index)
	h.s.blockedEvals.UnblockNode(nodeID, index)
}

func (h *serverHooks) JobStopped(namespace, jobID string) {
	h.s.blockedEvals.Untrack(namespace, jobID)
	h.s.periodicDispatcher.Remove(namespace, jobID)
}

func (h *serverHooks) JobUpserted(job *structs.Job) {
	if err := h.s.periodicDispatcher.Add(job); err != nil {
		h.s.logger.Error("periodic dispatcher refused a job", "error", err)
	}
}
