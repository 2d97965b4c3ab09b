package nomad

import (
	"github.com/drover-sched/drover/structs"
)

func (f *FSM) applyAllocClientUpdate(buf []byte, index uint64) any {
	var req structs.AllocUpdateRequest
	decode(buf, &req, structs.AllocClientUpdateRequestType)
	st := f.State()

	// Note which allocs become client-terminal with this entry: their
	// resources are released now (promise 1), so blocked evals may fit.
	freed := map[string]struct{}{}
	for _, update := range req.Alloc {
		if !structs.ClientTerminalStatus(update.ClientStatus) {
			continue
		}
		existing, err := st.AllocByID(nil, update.ID)
		if err != nil {
			return err
		}
		if existing != nil && !existing.ClientTerminalStatus() {
			freed[existing.NodeID] = struct{}{}
		}
	}
	// The report's time comes from the entry, never the FSM's clock.
	for _, u := range req.Alloc {
		u.ModifyTime = req.UpdatedAt
	}
	if err := st.UpdateAllocsFromClient(index, req.Alloc); err != nil {
		f.logger.Error("UpdateAllocsFromClient failed", "error", err)
		return err
	}
	if len(req.Evals) > 0 {
		if err := st.UpsertEvals(index, req.Evals); err != nil {
			return err
		}
		f.hooks.EvalsUpserted(req.Evals)
	}
	for nodeID := range freed {
		node, err := st.NodeByID(nil, nodeID)
		if err != nil || node == nil {
			continue
		}
		f.hooks.CapacityChanged(node.ID, node.ComputedClass, index)
	}
	return nil
}

func (f *FSM) applyPlanResults(buf []byte, index uint64) any {
	var req structs.ApplyPlanResultsRequest
	decode(buf, &req, structs.ApplyPlanResultsRequestType)
	st := f.State()
	if err := st.UpsertPlanResults(index, &req); err != nil {
		f.logger.Error("UpsertPlanResults failed", "error", err)
		return err
	}
	if len(req.PreemptionEvals) > 0 {
		f.hooks.EvalsUpserted(req.PreemptionEvals)
	}
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
	if err := f.State().UpdateAllocsDesiredTransitions(index, req.Allocs, req.Evals); err != nil {
		return err
	}
	f.hooks.EvalsUpserted(req.Evals)
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
	if err := f.State().UpdateAllocsDesiredTransitions(index, map[string]*structs.DesiredTransition{req.AllocID: t}, evals); err != nil {
		return err
	}
	f.hooks.EvalsUpserted(evals)
	return nil
}
