package structs

import "time"

// NodeRegisterRequest registers a node or updates its fingerprint.
type NodeRegisterRequest struct {
	Node      *Node
	NodeEvent *NodeEvent
	// Evals and EvalsReadIndex are written by the leader when the
	// registration makes the node ready, as in NodeUpdateStatusRequest.
	Evals          []*Evaluation
	EvalsReadIndex uint64
	WriteRequest
}

// NodeUpdateResponse answers node writes. HeartbeatTTL tells the client how
// soon it must heartbeat again; Servers lists servers it may use.
type NodeUpdateResponse struct {
	HeartbeatTTL    time.Duration
	EvalIDs         []string
	EvalCreateIndex uint64
	NodeModifyIndex uint64
	LeaderRPCAddr   string
	NumNodes        int32
	Servers         []*NodeServerInfo
	Index           uint64
	QueryMeta
}

// NodeServerInfo is a server a client may talk to.
type NodeServerInfo struct {
	RPCAdvertiseAddr string
	Datacenter       string
}

// NodeUpdateStatusRequest is a heartbeat (Status ready) or a server-side
// status change (down, disconnected). UpdatedAt (Unix seconds, like
// Node.StatusUpdatedAt) is stamped by the leader;
// Evals are the node-update evaluations created with the change, applied
// in the same transaction: a node is never ready (or down) in the state
// without the evals that give it (or take away) its work.
type NodeUpdateStatusRequest struct {
	NodeID    string
	SecretID  string
	Status    string
	NodeEvent *NodeEvent
	UpdatedAt int64
	Evals     []*Evaluation
	// EvalsReadIndex is the state index at which the leader read the jobs
	// it wrote Evals for, when the change makes the node ready. The FSM
	// refuses the entry if a system or sysbatch job that Evals leaves out
	// changed after it (the leader then reads again): that job's own eval
	// may have run while the node was not ready yet, and nothing else
	// would place it there. Zero (entries of servers before it existed,
	// status changes to down or disconnected) skips the check.
	EvalsReadIndex uint64
	WriteRequest
}

// NodeDeregisterRequest removes a node.
type NodeDeregisterRequest struct {
	NodeID string
	WriteRequest
}

// NodeBatchDeregisterRequest removes several nodes (GC).
type NodeBatchDeregisterRequest struct {
	NodeIDs []string
	// NodeModifyIndexes makes the removal conditional, per node: the node's
	// ModifyIndex when garbage collection found it down with nothing left
	// running. A node listed here is skipped (the entry does not fail) if it
	// changed since, is no longer down, or has an allocation that is not
	// client-terminal: a node that came back and got work is never deleted.
	// A node of NodeIDs without an entry is deleted unconditionally, as
	// entries written before this field existed were.
	NodeModifyIndexes map[string]uint64
	WriteRequest
}

// NodeUpdateDrainRequest starts or stops a drain.
type NodeUpdateDrainRequest struct {
	NodeID        string
	DrainStrategy *DrainStrategy
	MarkEligible  bool
	NodeEvent     *NodeEvent
	UpdatedAt     int64
	Meta          map[string]string
	// DrainComplete is set only by the leader's drainer when it ends a
	// drain because nothing is left to move (LastDrain says "complete");
	// a drain ended by an operator is "canceled". The endpoint never
	// copies it from a caller.
	DrainComplete bool
	// AccessorID is the accessor of the ACL token that asked, set by the
	// endpoint (never taken from the caller) and kept in LastDrain.
	AccessorID string
	WriteRequest
}

// NodeDrainUpdateResponse answers a drain request.
type NodeDrainUpdateResponse struct {
	NodeModifyIndex uint64
	EvalIDs         []string
	EvalCreateIndex uint64
	WriteMeta
}

// NodeUpdateEligibilityRequest changes scheduling eligibility.
type NodeUpdateEligibilityRequest struct {
	NodeID      string
	Eligibility string
	NodeEvent   *NodeEvent
	UpdatedAt   int64
	Evals       []*Evaluation
	WriteRequest
}

// NodeEligibilityUpdateResponse answers an eligibility change.
type NodeEligibilityUpdateResponse struct {
	NodeModifyIndex uint64
	EvalIDs         []string
	EvalCreateIndex uint64
	WriteMeta
}

// NodeSpecificRequest names one node; SecretID authenticates a client.
type NodeSpecificRequest struct {
	NodeID   string
	SecretID string
	QueryOptions
}

// NodeListRequest lists nodes.
type NodeListRequest struct {
	QueryOptions
}

// NodeListResponse answers NodeListRequest.
type NodeListResponse struct {
	Nodes []*NodeListStub
	QueryMeta
}

// SingleNodeResponse answers a lookup of one node.
type SingleNodeResponse struct {
	Node *Node
	QueryMeta
}

// NodeAllocsResponse lists a node's allocations.
type NodeAllocsResponse struct {
	Allocs []*Allocation
	QueryMeta
}

// NodeClientAllocsResponse is a client's assignment: every alloc on its node
// with the AllocModifyIndex of its last server-side change. The client
// fetches only the allocs whose index moved.
type NodeClientAllocsResponse struct {
	Allocs map[string]uint64
	QueryMeta
}

// NodeEvaluateRequest asks for evaluations of every job with allocations on
// a node (and every system job), as `node eval` does.
type NodeEvaluateRequest struct {
	NodeID string
	WriteRequest
}

// NodeBatchUpdateStatusRequest is the leader marking several nodes down or
// disconnected in one raft entry, when their heartbeat timers expired
// together (a rack lost its network, a storm of disconnects). Each update
// is what a NodeUpdateStatusRequest would carry for that node alone: its
// own status, time, node event and evals. One entry instead of one per
// node is what lets a leader whose commits are slow (three servers under
// load) keep up with max_node_down_per_second.
type NodeBatchUpdateStatusRequest struct {
	Updates []*NodeUpdateStatusRequest
	// NodeModifyIndexes holds each node's ModifyIndex as the leader read it
	// when it decided the node missed its heartbeat. The FSM skips (and
	// reports) a node that changed since or no longer exists, rather than
	// failing the entry: the leader's read may have been overtaken.
	NodeModifyIndexes map[string]uint64
	WriteRequest
}

// NodeBatchUpdateStatusResponse is the FSM's answer to a batch: the nodes
// it skipped because they changed after the leader read them. The leader
// looks at them again.
type NodeBatchUpdateStatusResponse struct {
	Skipped []string
}
