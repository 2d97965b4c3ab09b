package nomad

import (
	"testing"
)

// recordingAllocSink records what the FSM tells it.
type recordingAllocSink struct {
	changed map[string]uint64 // node -> highest index told
	resets  int
}

func (r *recordingAllocSink) AllocsChanged(nodeID string, index uint64) {
	if index > r.changed[nodeID] {
		r.changed[nodeID] = index
	}
}

func (r *recordingAllocSink) Reset() { r.resets++ }

// TestFSMTellsOfExactlyTheNodesWhoseAllocIndexMoved applies one entry of
// every message type and checks after each that the FSM told the sink of
// a node exactly when the index Node.GetClientAllocs answers with moved,
// and told it that index: placements, stops and garbage collection
// notify; a client's own status report, which leaves AllocModifyIndex
// alone, does not.
func TestFSMTellsOfExactlyTheNodesWhoseAllocIndexMoved(t *testing.T) {
	f := testFSM(t)
	sink := &recordingAllocSink{}
	f.SetAllocSink(sink)
	nodes := []string{"n1", "n2", "n3"}
	indexOf := func(node string) uint64 {
		_, index, err := clientAllocs(nil, f.State(), node, false)
		if err != nil {
			t.Fatal(err)
		}
		return index
	}
	prev := map[string]uint64{}
	moves := 0
	for _, e := range buildLog(t).entries {
		sink.changed = map[string]uint64{}
		if resp := f.Apply(e); resp != nil {
			if err, ok := resp.(error); ok {
				t.Fatalf("entry %d failed: %v", e.Index, err)
			}
		}
		for _, n := range nodes {
			now := indexOf(n)
			told, ok := sink.changed[n]
			switch {
			case now != prev[n] && (!ok || told != now):
				t.Errorf("entry %d moved %s's alloc index %d -> %d; the sink was told %d (told: %v)", e.Index, n, prev[n], now, told, ok)
			case now == prev[n] && ok:
				t.Errorf("entry %d left %s's alloc index at %d, yet the sink was told %d", e.Index, n, now, told)
			}
			if now != prev[n] {
				moves++
			}
			prev[n] = now
		}
	}
	t.Logf("%d alloc index moves over %d entries", moves, len(buildLog(t).entries))
	if moves < 3 {
		t.Fatalf("the log moved alloc indexes only %d times: it does not exercise placements, stops and GC", moves)
	}
}
