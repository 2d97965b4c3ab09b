package nomad

import (
	"context"

	"github.com/drover-sched/drover/nomad/planner"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// plannerState is the plan applier's state source over the state store the
// function returns: the server's is asked for each time, since raft
// replaces it when it restores a snapshot.
type plannerState func() *state.StateStore

func (f plannerState) SnapshotMinIndex(ctx context.Context, index uint64) (planner.Snapshot, error) {
	snap, err := f().SnapshotMinIndex(ctx, index)
	if err != nil {
		return nil, err
	}
	return snap, nil
}

// plannerRaft submits the plan applier's entries through this server's
// raft without waiting, so the applier can pipeline; the future's Error
// includes an error the FSM returned for the entry.
type plannerRaft struct{ s *Server }

func (p plannerRaft) ApplyPlanResults(req *structs.ApplyPlanResultsRequest) (planner.RaftFuture, error) {
	f, err := p.s.raftApplyFuture(structs.ApplyPlanResultsRequestType, req)
	if err != nil {
		return nil, err
	}
	return fsmErrorFuture{f}, nil
}

// runPlanApplier is the leader's plan applier (nomad/planner) over the
// server's plan queue, one goroutine started with leadership and stopped
// with it; the queue is enabled before and disabled after.
func (s *Server) runPlanApplier(ctx context.Context) {
	planner.NewApplier(s.planQueue, planner.Config{
		State:       plannerState(s.State),
		Raft:        plannerRaft{s},
		Clock:       s.clock,
		Logger:      s.logger.Named("plan_apply"),
		Metrics:     s.metrics,
		Workers:     2,
		GroupCommit: true,
	}).Run(ctx)
}
