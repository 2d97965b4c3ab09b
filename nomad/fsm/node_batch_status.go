package fsm

import (
	"fmt"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// applyNodeBatchUpdateStatus marks the nodes of one heartbeat batch down
// or disconnected, each with its node event and evals, in one
// transaction: a reader never sees part of a batch.
//
// Each node is checked against the ModifyIndex the leader read it at and
// skipped if it changed since or is gone (a drain, an eligibility change,
// a deregistration that raft ordered before this entry). The leader holds
// every batched node's status lock until the entry has applied, so a
// heartbeat cannot come between its check and this apply; the index check
// covers the writes that do not take that lock. A skipped node (or a
// node named twice, after its first update) is reported
// back, not an error: the rest of the batch still applies, on every server
// alike, and the leader looks at the skipped ones again.
//
// Only the server's own statuses are accepted here: a batch that would
// make a node ready (which needs the ready-eval checks of a single update)
// is refused whole.
func (f *FSM) applyNodeBatchUpdateStatus(buf []byte, index uint64) any {
	var req structs.NodeBatchUpdateStatusRequest
	decode(buf, &req, structs.NodeBatchUpdateStatusRequestType)
	st := f.State()
	var apply []*structs.NodeUpdateStatusRequest
	resp := &structs.NodeBatchUpdateStatusResponse{}
	seen := make(map[string]bool, len(req.Updates))
	for _, u := range req.Updates {
		if u == nil {
			return fmt.Errorf("node batch status entry %d has an empty update", index)
		}
		if u.Status != structs.NodeStatusDown && u.Status != structs.NodeStatusDisconnected {
			return fmt.Errorf("node batch status entry %d: node %s: status %q; a batch only marks nodes down or disconnected",
				index, structs.ShortID(u.NodeID), u.Status)
		}
		// FSM applies run one at a time, so this read sees exactly the
		// state the write below starts from.
		node, err := st.NodeByID(nil, u.NodeID)
		if err != nil {
			return err
		}
		want, ok := req.NodeModifyIndexes[u.NodeID]
		// A node with no index to check against is skipped too: the
		// leader always sends one, and a node is never marked down
		// without the condition that makes it safe.
		if node == nil || !ok || node.ModifyIndex != want || seen[u.NodeID] {
			resp.Skipped = append(resp.Skipped, u.NodeID)
			continue
		}
		seen[u.NodeID] = true
		apply = append(apply, u)
	}
	err := st.Write(index, func(txn *state.Txn) error {
		for _, u := range apply {
			if err := txn.UpdateNodeStatus(u.NodeID, u.Status, u.UpdatedAt, u.NodeEvent); err != nil {
				return err
			}
			if err := txn.UpsertEvals(u.Evals); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		f.logger.Error("node batch status update failed", "nodes", len(apply), "error", err)
		return err
	}
	var evals []*structs.Evaluation
	for _, u := range apply {
		evals = append(evals, u.Evals...)
	}
	f.notifyEvals(st, evals)
	return resp
}
