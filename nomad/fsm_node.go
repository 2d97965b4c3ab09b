package nomad

import (
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

func (f *FSM) applyNodeRegister(buf []byte, index uint64) any {
	var req structs.NodeRegisterRequest
	decode(buf, &req, structs.NodeRegisterRequestType)
	st := f.State()
	if err := st.UpsertNode(index, req.Node); err != nil {
		f.logger.Error("UpsertNode failed", "error", err)
		return err
	}
	if req.Node.Status == structs.NodeStatusReady {
		f.hooks.CapacityChanged(req.Node.ID, req.Node.ComputedClass, index)
	}
	return nil
}

func (f *FSM) applyNodeDeregister(buf []byte, index uint64) any {
	var req structs.NodeDeregisterRequest
	decode(buf, &req, structs.NodeDeregisterRequestType)
	if err := f.State().DeleteNode(index, []string{req.NodeID}); err != nil {
		return err
	}
	return nil
}

// applyNodeBatchDeregister removes the nodes garbage collection chose. A
// node with an expected ModifyIndex in the entry is checked again here and
// skipped if it changed, is no longer down or has work on it: the leader
// chose it on a read that raft may have overtaken.
func (f *FSM) applyNodeBatchDeregister(buf []byte, index uint64) any {
	var req structs.NodeBatchDeregisterRequest
	decode(buf, &req, structs.NodeBatchDeregisterRequestType)
	if _, err := f.State().DeleteNodesIfUnchanged(index, req.NodeIDs, req.NodeModifyIndexes); err != nil {
		return err
	}
	return nil
}

// applyNodeUpdateStatus records the new status and the evals it creates in
// one transaction: a reader that sees a node down also sees the evals that
// replace its work, and a failure keeps neither.
func (f *FSM) applyNodeUpdateStatus(buf []byte, index uint64) any {
	var req structs.NodeUpdateStatusRequest
	decode(buf, &req, structs.NodeUpdateStatusRequestType)
	st := f.State()
	err := st.Write(index, func(txn *state.Txn) error {
		if err := st.UpdateNodeStatusTxn(txn, req.NodeID, req.Status, req.UpdatedAt, req.NodeEvent); err != nil {
			return err
		}
		return st.UpsertEvalsTxn(txn, req.Evals)
	})
	if err != nil {
		f.logger.Error("node status update failed", "node_id", req.NodeID, "error", err)
		return err
	}
	f.notifyEvals(st, req.Evals)
	if req.Status == structs.NodeStatusReady {
		if node, err := st.NodeByID(nil, req.NodeID); err == nil && node != nil {
			f.hooks.CapacityChanged(node.ID, node.ComputedClass, index)
		}
	}
	return nil
}

func (f *FSM) applyNodeUpdateDrain(buf []byte, index uint64) any {
	var req structs.NodeUpdateDrainRequest
	decode(buf, &req, structs.NodeUpdateDrainRequestType)
	st := f.State()
	if err := st.UpdateNodeDrain(index, req.NodeID, req.DrainStrategy, req.MarkEligible, req.UpdatedAt, req.NodeEvent); err != nil {
		return err
	}
	if req.DrainStrategy == nil && req.MarkEligible {
		if node, err := st.NodeByID(nil, req.NodeID); err == nil && node != nil {
			f.hooks.CapacityChanged(node.ID, node.ComputedClass, index)
		}
	}
	return nil
}

// applyNodeUpdateEligibility changes eligibility and records the evals it
// creates in one transaction.
func (f *FSM) applyNodeUpdateEligibility(buf []byte, index uint64) any {
	var req structs.NodeUpdateEligibilityRequest
	decode(buf, &req, structs.NodeUpdateEligibilityRequestType)
	st := f.State()
	err := st.Write(index, func(txn *state.Txn) error {
		if err := st.UpdateNodeEligibilityTxn(txn, req.NodeID, req.Eligibility, req.UpdatedAt, req.NodeEvent); err != nil {
			return err
		}
		return st.UpsertEvalsTxn(txn, req.Evals)
	})
	if err != nil {
		return err
	}
	f.notifyEvals(st, req.Evals)
	if req.Eligibility == structs.NodeSchedulingEligible {
		if node, err := st.NodeByID(nil, req.NodeID); err == nil && node != nil {
			f.hooks.CapacityChanged(node.ID, node.ComputedClass, index)
		}
	}
	return nil
}
