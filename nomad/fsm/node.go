package fsm

import (
	"errors"
	"fmt"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// applyNodeRegister records a node and, when the registration makes it
// ready, the evals that give it its work, in one transaction.
func (f *FSM) applyNodeRegister(buf []byte, index uint64) any {
	var req structs.NodeRegisterRequest
	decode(buf, &req, structs.NodeRegisterRequestType)
	st := f.State()
	if req.Node == nil {
		return fmt.Errorf("node register entry %d has no node", index)
	}
	if req.Node.Status == structs.NodeStatusReady {
		if err := checkReadyNodeEvals(st, req.Node.ID, req.EvalsReadIndex, req.Evals); err != nil {
			return err
		}
	}
	err := st.Write(index, func(txn *state.Txn) error {
		if err := txn.UpsertNode(req.Node, nil); err != nil {
			return err
		}
		return txn.UpsertEvals(req.Evals)
	})
	if err != nil {
		f.logger.Error("UpsertNode failed", "error", err)
		return err
	}
	f.notifyEvals(st, req.Evals)
	if req.Node.Status == structs.NodeStatusReady {
		f.hooks.CapacityChanged(req.Node.ID, req.Node.ComputedClass, index)
	}
	return nil
}

func (f *FSM) applyNodeDeregister(buf []byte, index uint64) any {
	var req structs.NodeDeregisterRequest
	decode(buf, &req, structs.NodeDeregisterRequestType)
	if err := f.State().Write(index, func(tx *state.Txn) error { return tx.DeleteNode([]string{req.NodeID}) }); err != nil {
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
	err := f.State().Write(index, func(tx *state.Txn) error {
		_, err := tx.DeleteNodesIfUnchanged(req.NodeIDs, req.NodeModifyIndexes)
		return err
	})
	if err != nil {
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
	if req.Status == structs.NodeStatusReady {
		if err := checkReadyNodeEvals(st, req.NodeID, req.EvalsReadIndex, req.Evals); err != nil {
			return err
		}
	}
	err := st.Write(index, func(txn *state.Txn) error {
		if err := txn.UpdateNodeStatus(req.NodeID, req.Status, req.UpdatedAt, req.NodeEvent); err != nil {
			return err
		}
		return txn.UpsertEvals(req.Evals)
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
	var err error
	if req.DrainStrategy != nil {
		err = st.Write(index, func(tx *state.Txn) error {
			return tx.UpdateNodeDrain(req.NodeID, req.DrainStrategy, req.MarkEligible, req.UpdatedAt, req.NodeEvent, state.DrainOperator{AccessorID: req.AccessorID, Meta: req.Meta})
		})
	} else {
		status := state.DrainStatusCanceled
		if req.DrainComplete {
			status = state.DrainStatusComplete
		}
		err = st.Write(index, func(tx *state.Txn) error {
			return tx.EndNodeDrain(req.NodeID, req.MarkEligible, status, req.UpdatedAt, req.NodeEvent, state.DrainOperator{AccessorID: req.AccessorID, Meta: req.Meta})
		})
	}
	if err != nil {
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
		if err := txn.UpdateNodeEligibility(req.NodeID, req.Eligibility, req.UpdatedAt, req.NodeEvent); err != nil {
			return err
		}
		return txn.UpsertEvals(req.Evals)
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

// ErrReadyNodeEvalsStale refuses an entry that makes a node ready with
// evals read before a system or sysbatch job changed: the leader reads the
// jobs again and writes a new entry.
var ErrReadyNodeEvalsStale = errors.New("the node's evals were read before a system job changed")

// checkReadyNodeEvals refuses an entry that makes node nodeID ready if a
// system or sysbatch job that wants to run changed after readIndex (where
// the leader read the jobs) and none of evals is for it. Such a job's own
// eval may have run on a state where the node was not ready yet, so
// without one here the node would never get that job's work. It reads
// only the state, so every server decides the same; readIndex 0 (an entry
// written before the field existed) skips the check.
func checkReadyNodeEvals(st *state.StateStore, nodeID string, readIndex uint64, evals []*structs.Evaluation) error {
	if readIndex == 0 {
		return nil
	}
	covered := make(map[structs.NamespacedID]bool, len(evals))
	for _, e := range evals {
		if e != nil {
			covered[e.NamespacedJobID()] = true
		}
	}
	for _, typ := range []string{structs.JobTypeSystem, structs.JobTypeSysBatch} {
		it, err := st.JobsBySchedulerType(nil, typ)
		if err != nil {
			return err
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			job := raw.(*structs.Job)
			if job.Stop || job.ModifyIndex <= readIndex || covered[job.NamespacedID()] {
				continue
			}
			return fmt.Errorf("node %s: %w (job %q at index %d, evals read at %d)", nodeID, ErrReadyNodeEvalsStale, job.ID, job.ModifyIndex, readIndex)
		}
	}
	return nil
}
