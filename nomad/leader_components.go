package nomad

import (
	"github.com/drover-sched/drover/nomad/broker"
	"github.com/drover-sched/drover/nomad/planner"
	"github.com/drover-sched/drover/structs"
)

// setupLeaderComponents creates the leader-only queues and the
// heartbeater, once for the server's lifetime. They start disabled;
// establishLeadership enables them. Creating them before any endpoint is
// served means endpoints read these fields without synchronisation.
func (s *Server) setupLeaderComponents() error {
	eb, err := broker.NewEvalBroker(broker.EvalBrokerConfig{
		Clock:               s.clock,
		NackTimeout:         s.config.EvalNackTimeout,
		InitialNackDelay:    s.config.EvalNackInitialReenqueue,
		SubsequentNackDelay: s.config.EvalNackSubsequentReenqueue,
		DeliveryLimit:       s.config.EvalDeliveryLimit,
		FailedFollowUpDelay: s.config.EvalFailedFollowupDelay,
		Logger:              s.logger.Named("broker"),
		Metrics:             s.metrics,
	})
	if err != nil {
		return err
	}
	s.evalBroker = eb
	s.blockedEvals = broker.NewBlockedEvals(eb, broker.BlockedEvalsConfig{Clock: s.clock, Logger: s.logger.Named("blocked_evals")})
	s.planQueue = planner.NewQueue()
	s.heartbeats = s.newHeartbeater()
	periodicClock := s.clock
	if s.opts.wrapPeriodicClock != nil {
		periodicClock = s.opts.wrapPeriodicClock(periodicClock)
	}
	s.periodicDispatcher = NewPeriodicDispatch(PeriodicDispatchConfig{
		Clock:         periodicClock,
		Logger:        s.logger.Named("periodic"),
		State:         s.State,
		CatchUpWindow: s.config.JobGCThreshold,
		Register: func(req *structs.JobRegisterRequest) (uint64, error) {
			idx, _, err := s.raftApply(structs.JobRegisterRequestType, req)
			return idx, err
		},
	})
	return nil
}

// serverEvalWriter writes evals through raft, for leader loops.
type serverEvalWriter struct{ s *Server }

func (w serverEvalWriter) UpsertEvals(evals []*structs.Evaluation) error {
	_, _, err := w.s.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals})
	return err
}

func (s *Server) evalWriter() broker.EvalWriter { return serverEvalWriter{s} }
