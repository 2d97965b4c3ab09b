package fsm

import (
	"github.com/drover-sched/drover/nomad/clientreport"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

func (f *FSM) applyAllocClientUpdate(buf []byte, index uint64) any {
	var req structs.AllocUpdateRequest
	decode(buf, &req, structs.AllocClientUpdateRequestType)
	st := f.State()
	// The one decision on a client's report, against the state raft
	// ordered before this entry (see clientreport).
	d, err := clientreport.Decide(clientreport.Input{
		State: st, Reports: req.Alloc, UpdatedAt: req.UpdatedAt, Index: index, Evals: req.Evals,
	})
	if err != nil {
		return err
	}
	if len(d.Updates) == 0 && len(d.Evals) == 0 {
		return nil // every report was about finished or collected work
	}
	// The reports and their evals are one transaction: a reader never sees
	// an alloc reconnected or failed without the eval that acts on it.
	err = st.Write(index, func(txn *state.Txn) error {
		if len(d.Updates) > 0 {
			if err := txn.UpdateAllocsFromClient(d.Updates); err != nil {
				return err
			}
		}
		return txn.UpsertEvals(d.Evals)
	})
	if err != nil {
		f.logger.Error("client alloc update failed", "error", err)
		return err
	}
	f.notifyEvals(st, d.Evals)
	for _, node := range d.Freed {
		f.hooks.CapacityChanged(node.ID, node.ComputedClass, index)
	}
	return nil
}

func (f *FSM) applyPlanResults(buf []byte, index uint64) any {
	var req structs.ApplyPlanResultsRequest
	decode(buf, &req, structs.ApplyPlanResultsRequestType)
	st := f.State()
	if err := st.Write(index, func(tx *state.Txn) error { return tx.UpsertPlanResults(&req) }); err != nil {
		f.logger.Error("UpsertPlanResults failed", "error", err)
		return err
	}
	f.notifyEvals(st, req.PreemptionEvals)
	// A plan that marks allocs lost frees their resources.
	freed := map[string]struct{}{}
	for _, a := range req.AllocsStopped {
		if a.ClientStatus == structs.AllocClientStatusLost {
			freed[a.NodeID] = struct{}{}
		}
	}
	for nodeID := range freed {
		if node, err := st.NodeByID(nil, nodeID); err == nil && node != nil {
			f.hooks.CapacityChanged(node.ID, node.ComputedClass, index)
		}
	}
	return nil
}

func (f *FSM) applyAllocDesiredTransition(buf []byte, index uint64) any {
	var req structs.AllocUpdateDesiredTransitionRequest
	decode(buf, &req, structs.AllocUpdateDesiredTransitionRequestType)
	st := f.State()
	if err := st.Write(index, func(tx *state.Txn) error {
		return tx.UpdateAllocsDesiredTransitions(req.Allocs, req.Evals, req.NodeEvents)
	}); err != nil {
		return err
	}
	f.notifyEvals(st, req.Evals)
	return nil
}

func (f *FSM) applyAllocStop(buf []byte, index uint64) any {
	var req structs.AllocStopRequest
	decode(buf, &req, structs.AllocStopRequestType)
	t := &structs.DesiredTransition{Migrate: structs.BoolPtr(true)}
	if req.NoShutdownDelay {
		t.NoShutdownDelay = structs.BoolPtr(true)
	}
	var evals []*structs.Evaluation
	if req.Eval != nil {
		evals = append(evals, req.Eval)
	}
	st := f.State()
	if err := st.Write(index, func(tx *state.Txn) error {
		return tx.UpdateAllocsDesiredTransitions(map[string]*structs.DesiredTransition{req.AllocID: t}, evals, nil)
	}); err != nil {
		return err
	}
	f.notifyEvals(st, evals)
	return nil
}
