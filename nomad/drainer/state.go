package drainer

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/structs"
)

// State is what a pass reads: a snapshot of the server's state store
// (*state.StateStore is one). Every read takes the watch set its channels
// go into, so the loop can sleep until something the pass read changes.
type State interface {
	// Nodes iterates every node (*structs.Node).
	Nodes(ws memdb.WatchSet) (memdb.ResultIterator, error)
	AllocsByNode(ws memdb.WatchSet, nodeID string) ([]*structs.Allocation, error)
	JobByID(ws memdb.WatchSet, namespace, id string) (*structs.Job, error)
	// AllocsByJob with anyCreateIndex true returns the allocs of every
	// job of that ID, earlier ones included.
	AllocsByJob(ws memdb.WatchSet, namespace, jobID string, anyCreateIndex bool) ([]*structs.Allocation, error)
}
