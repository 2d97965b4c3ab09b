package fsm

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// Server-pushed alloc-change notices (server heap per node, issue 16).
//
// After each entry the FSM tells an AllocSink which nodes' alloc
// indexes the entry moved, read from the changes it committed: an alloc
// written with a new AllocModifyIndex, or deleted (garbage collection sets
// the node's allocs-deleted index to the entry's). That is exactly what
// moves the index Node.GetClientAllocs answers with; a client's own status
// report, which leaves AllocModifyIndex alone, does not, so it wakes
// nobody. It reads nothing but the changes and the entry's index.

// AllocSink is told of nodes whose alloc index an applied entry
// moved. *allocNotifier is one; neither method may block.
type AllocSink interface {
	AllocsChanged(nodeID string, index uint64)
	// Reset is told that a snapshot replaced the state.
	Reset()
}

// SetAllocSink makes the FSM tell sink of alloc changes from now on. Call
// it before raft starts applying.
func (f *FSM) SetAllocSink(sink AllocSink) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.allocSink = sink
}

// noticeAllocChanges tells the alloc sink which nodes' alloc indexes the
// entry at index moved.
func (f *FSM) noticeAllocChanges(index uint64, changes memdb.Changes) {
	if f.allocSink == nil {
		return
	}
	for i := range changes {
		c := &changes[i]
		if c.Table != state.TableAllocs {
			continue
		}
		if nodeID, moved := allocIndexMoved(c); moved > 0 {
			f.allocSink.AllocsChanged(nodeID, moved)
		} else if c.Deleted() {
			if a, ok := c.Before.(*structs.Allocation); ok {
				f.allocSink.AllocsChanged(a.NodeID, index)
			}
		}
	}
}

// allocIndexMoved returns the node and new AllocModifyIndex of an alloc
// the change wrote with a higher AllocModifyIndex than it had; zero if it
// did not move it.
func allocIndexMoved(c *memdb.Change) (string, uint64) {
	after, ok := c.After.(*structs.Allocation)
	if !ok || after == nil {
		return "", 0
	}
	if before, ok := c.Before.(*structs.Allocation); ok && before != nil &&
		before.AllocModifyIndex >= after.AllocModifyIndex && before.NodeID == after.NodeID {
		return "", 0
	}
	return after.NodeID, after.AllocModifyIndex
}
