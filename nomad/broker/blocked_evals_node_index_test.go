package broker

import (
	"fmt"
	"testing"
)

// The per-node unblock indexes stay bounded however many nodes change.
func TestBlocked_NodeUnblockIndexesAreBounded(t *testing.T) {
	blocked, _ := newTestBlocked(t)
	for i := range 10 * maxNodeUnblockIndexes {
		blocked.UnblockNode(fmt.Sprintf("node-%d", i), uint64(100+i))
	}
	blocked.mu.Lock()
	n, floor := len(blocked.nodeIndex), blocked.nodeIndexFloor
	blocked.mu.Unlock()
	if n > maxNodeUnblockIndexes {
		t.Fatalf("%d node unblock indexes kept, want at most %d", n, maxNodeUnblockIndexes)
	}
	if floor == 0 {
		t.Fatal("entries were forgotten but the floor was not raised")
	}
}

// A forgotten node's change still counts: an eval naming the node whose
// snapshot is older than the change is enqueued again, not parked, and
// one whose snapshot is newer than every change is parked.
func TestBlocked_ForgottenNodeUnblockIsNotMissed(t *testing.T) {
	blocked, broker := newTestBlocked(t)
	// node-0 changes first, at index 100, and is among the forgotten.
	for i := range 2 * maxNodeUnblockIndexes {
		blocked.UnblockNode(fmt.Sprintf("node-%d", i), uint64(100+i))
	}
	blocked.mu.Lock()
	_, kept := blocked.nodeIndex["node-0"]
	blocked.mu.Unlock()
	if kept {
		t.Fatal("node-0's entry was kept; the test needs it forgotten")
	}
	missed := blockedEvalFor("sys-missed", 50, 99, map[string]bool{"c": false})
	missed.Type = "system"
	missed.NodeID = "node-0"
	blocked.Block(missed)
	if s := blocked.Stats(); s.TotalBlocked != 0 {
		t.Fatal("an eval that missed its node's forgotten change was parked")
	}
	expectWoken(t, broker, missed)

	last := uint64(100 + 2*maxNodeUnblockIndexes)
	saw := blockedEvalFor("sys-saw", last+1, last, map[string]bool{"c": false})
	saw.Type = "system"
	saw.NodeID = "node-0"
	blocked.Block(saw)
	if s := blocked.Stats(); s.TotalBlocked != 1 {
		t.Fatalf("blocked = %d: an eval whose snapshot saw every change must be parked", s.TotalBlocked)
	}
}
