package nomad

import (
	"fmt"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// A client acts only as its own node. Every call a client makes for itself
// (Node.Register of a known node, Node.UpdateStatus, Node.GetClientAllocs,
// Node.UpdateAlloc, Alloc.GetAllocs for its node) carries the node's ID and
// SecretID, and authenticateNode checks them before the call reads or
// writes anything. Calls an operator makes about a node (drain,
// eligibility, evaluate, purge) are not the node's own and use lookupNode:
// they are for access control to gate, not for the node's secret.
//
// The secret itself leaves the servers only towards its node: answers that
// carry a structs.Node carry a copy made by Node.Sanitize.

// authenticateNode returns the node nodeID names if secretID is its secret.
// A missing node is ErrNotFound (a client whose node was garbage collected
// registers again on it); a missing or wrong secret is refused.
func authenticateNode(st *state.StateStore, nodeID, secretID string) (*structs.Node, error) {
	node, err := lookupNode(st, nodeID)
	if err != nil {
		return nil, err
	}
	if err := node.CheckSecret(secretID); err != nil {
		return nil, err
	}
	return node, nil
}

// lookupNode returns the node nodeID names, for operator actions on it.
func lookupNode(st *state.StateStore, nodeID string) (*structs.Node, error) {
	if nodeID == "" {
		return nil, errBadRequest("node ID is missing")
	}
	node, err := st.NodeByID(nil, nodeID)
	if err != nil {
		return nil, err
	}
	if node == nil {
		return nil, fmt.Errorf("node %s: %w", nodeID, structs.ErrNotFound)
	}
	return node, nil
}
