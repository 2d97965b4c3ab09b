package nomad

import (
	"fmt"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

func (f *FSM) applyAllocClientUpdate(buf []byte, index uint64) any {
	var req structs.AllocUpdateRequest
	decode(buf, &req, structs.AllocClientUpdateRequestType)
	st := f.State()

	// The endpoint checked the node and the transitions on a read; state
	// may have moved on before this entry applied (the node was marked
	// disconnected, the alloc lost or unknown), so the checks that keep
	// the reconnect order are made again here.
	updates := make([]*structs.Allocation, 0, len(req.Alloc))
	evals := append([]*structs.Evaluation(nil), req.Evals...)
	hasEval := map[structs.NamespacedID]bool{}
	for _, e := range evals {
		hasEval[e.NamespacedJobID()] = true
	}
	freed := map[string]struct{}{}
	nodes := map[string]*structs.Node{}
	for _, update := range req.Alloc {
		existing, err := st.AllocByID(nil, update.ID)
		if err != nil {
			return err
		}
		if existing == nil || existing.ClientTerminalStatus() {
			continue // collected, or a late report about finished work
		}
		if existing.StaleClientReport(update) {
			// Based on a version older than a server change raft ordered
			// before this entry (the endpoint read the alloc before it).
			continue
		}
		node, ok := nodes[existing.NodeID]
		if !ok {
			if node, err = st.NodeByID(nil, existing.NodeID); err != nil {
				return err
			}
			nodes[existing.NodeID] = node
		}
		if node == nil || node.Status != structs.NodeStatusReady {
			status := "gone"
			if node != nil {
				status = node.Status
			}
			return fmt.Errorf("node %s is %s, heartbeat first: %w", existing.NodeID, status, structs.ErrNodeNotReady)
		}
		// The report's time comes from the entry, never the FSM's clock.
		u := update.Copy()
		u.ModifyTime = req.UpdatedAt
		updates = append(updates, u)
		if structs.ClientTerminalStatus(u.ClientStatus) {
			freed[existing.NodeID] = struct{}{}
		}
		key := existing.NamespacedJobID()
		if existing.NeedsToReconnect() && u.ClientStatus != structs.AllocClientStatusUnknown && !hasEval[key] && existing.Job != nil {
			// The endpoint read the alloc before it was marked unknown;
			// the reconnect still needs its evaluation.
			evals = append(evals, &structs.Evaluation{
				ID: deterministicID("reconnect", fmt.Sprint(index), existing.ID), Namespace: existing.Namespace,
				Priority: existing.Job.Priority, Type: existing.Job.Type, TriggeredBy: structs.EvalTriggerReconnect,
				JobID: existing.JobID, NodeID: existing.NodeID, Status: structs.EvalStatusPending,
				CreateTime: req.UpdatedAt, ModifyTime: req.UpdatedAt,
			})
			hasEval[key] = true
		}
	}
	if len(updates) == 0 && len(evals) == 0 {
		return nil // every report was about finished or collected work
	}
	// The reports and their evals are one transaction: a reader never sees
	// an alloc reconnected or failed without the eval that acts on it.
	err := st.Write(index, func(txn *state.Txn) error {
		if len(updates) > 0 {
			if err := st.UpdateAllocsFromClientTxn(txn, updates); err != nil {
				return err
			}
		}
		return st.UpsertEvalsTxn(txn, evals)
	})
	if err != nil {
		f.logger.Error("client alloc update failed", "error", err)
		return err
	}
	f.notifyEvals(st, evals)
	for nodeID := range freed {
		if node := nodes[nodeID]; node != nil {
			f.hooks.CapacityChanged(node.ID, node.ComputedClass, index)
		}
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
	if err := st.UpdateAllocsDesiredTransitionsWithEvents(index, req.Allocs, req.Evals, req.NodeEvents); err != nil {
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
	if err := st.UpdateAllocsDesiredTransitions(index, map[string]*structs.DesiredTransition{req.AllocID: t}, evals); err != nil {
		return err
	}
	f.notifyEvals(st, evals)
	return nil
}
