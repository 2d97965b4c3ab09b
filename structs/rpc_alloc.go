package structs

// AllocUpdateRequest carries client status updates (Node.UpdateAlloc) in one
// raft entry, with the evaluations they trigger (made by the leader).
type AllocUpdateRequest struct {
	// Alloc are the reports (from a client) or the updates (in the raft
	// entry). A client report's AllocModifyIndex is the version of the
	// alloc it is based on; see Allocation.StaleClientReport.
	Alloc     []*Allocation
	Evals     []*Evaluation
	UpdatedAt int64
	// NodeID and SecretID say which node reports: every allocation in the
	// batch must be placed on it. The leader leaves both out of the raft
	// entry it writes.
	NodeID   string
	SecretID string
	WriteRequest
}

// AllocUpdateDesiredTransitionRequest sets desired transitions (drain,
// forced reschedule) on allocations.
type AllocUpdateDesiredTransitionRequest struct {
	Allocs map[string]*DesiredTransition
	Evals  []*Evaluation
	// NodeEvents are recorded on the named nodes in the same entry: the
	// drainer writes each batch of migrations with the event that says so
	// on the draining node, so the node's history and its allocs' marks
	// never disagree. An event for a node that no longer exists is
	// skipped.
	NodeEvents map[string]*NodeEvent
	WriteRequest
}

// AllocStopRequest stops one allocation (`alloc stop`): the alloc is marked
// for migration and an eval replaces it.
type AllocStopRequest struct {
	AllocID         string
	NoShutdownDelay bool
	Eval            *Evaluation
	WriteRequest
}

// AllocStopResponse answers AllocStopRequest.
type AllocStopResponse struct {
	EvalID string
	Index  uint64
}

// AllocSpecificRequest names one allocation.
type AllocSpecificRequest struct {
	AllocID string
	QueryOptions
}

// AllocsGetRequest fetches several allocations by ID (clients use it for
// the ones whose index changed).
type AllocsGetRequest struct {
	AllocIDs []string
	// NodeID and SecretID are set by a client reading its own allocations:
	// the secret is checked and only allocations placed on that node are
	// answered. A read without them is an operator's.
	NodeID   string
	SecretID string
	QueryOptions
}

// AllocsGetResponse answers AllocsGetRequest.
type AllocsGetResponse struct {
	Allocs []*Allocation
	QueryMeta
}

// AllocListRequest lists allocations.
type AllocListRequest struct {
	QueryOptions
}

// AllocListResponse answers AllocListRequest.
type AllocListResponse struct {
	Allocations []*AllocListStub
	QueryMeta
}

// SingleAllocResponse answers a lookup of one allocation.
type SingleAllocResponse struct {
	Alloc *Allocation
	QueryMeta
}

// AllocLocateRequest is Alloc.Locate: where the allocation AllocID (a full
// ID or a prefix of one) runs, asked by an agent that must send a client
// request (logs, files, signals, stats) to the agent of that node. The
// caller's token must allow one of Capabilities, the ones the client
// request needs, in the allocation's namespace.
type AllocLocateRequest struct {
	AllocID      string
	Capabilities []string
	QueryOptions
}

// AllocLocateResponse says where an allocation runs: its full ID and
// namespace, and its node with the node's HTTP address and status.
type AllocLocateResponse struct {
	AllocID      string
	Namespace    string
	NodeID       string
	NodeHTTPAddr string
	NodeStatus   string
	QueryMeta
}

// MaxLocateCapabilities bounds the capabilities one Alloc.Locate names;
// the client requests need one or two.
const MaxLocateCapabilities = 4
