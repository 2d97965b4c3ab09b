package planner

import (
	"context"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/structs"
)

// View is what a plan is checked against: a state snapshot, or a snapshot
// with the plans still being committed laid over it (optimisticView). The
// state store's snapshots satisfy it as they are.
type View interface {
	NodeByID(ws memdb.WatchSet, id string) (*structs.Node, error)
	AllocsByNode(ws memdb.WatchSet, nodeID string) ([]*structs.Allocation, error)
	AllocByID(ws memdb.WatchSet, id string) (*structs.Allocation, error)
}

// Snapshot is a point-in-time View and the raft index it includes.
type Snapshot interface {
	View
	LatestIndex() (uint64, error)
}

// StateSource gives the applier its snapshots.
type StateSource interface {
	// SnapshotMinIndex waits until the state has applied index (or ctx is
	// done) and returns a snapshot of it. The applier asks for at least
	// its own last commit, so it never checks a plan against a state
	// older than what it already committed. The server's source reads
	// the current state store each time: the store is replaced when raft
	// restores a snapshot.
	SnapshotMinIndex(ctx context.Context, index uint64) (Snapshot, error)
}

// Raft commits the applier's entries.
type Raft interface {
	// ApplyPlanResults submits the entry and returns at once; the
	// future's Error waits for the entry to be applied to the FSM on this
	// server (an error the FSM returned included) and Index is its raft
	// index.
	ApplyPlanResults(req *structs.ApplyPlanResultsRequest) (RaftFuture, error)
}

// RaftFuture is the part of a raft apply future the applier uses.
type RaftFuture interface {
	Error() error
	Index() uint64
}
