package heartbeat

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/nomad/state"
)

// waitTracked waits until the heartbeater holds a deadline for n nodes and
// the clock has its wake and its watchdog armed. The clock's timers no
// longer count nodes (one wake serves them all), so a test that waited for
// n node timers waits for this instead.
func waitTracked(h *Heartbeater, clock *clock.Fake, n int, timeout time.Duration) bool {
	ok, _ := wait.Poll(timeout, func() (bool, string) {
		return h.Tracked() >= n && clock.Pending() >= 2, "deadlines not armed"
	})
	return ok
}

// A thousand nodes with deadlines cost the clock one wake timer, not one
// timer each: the per-node timers and their closures were a good part of
// the leader's heap per node at fleet size. The nodes still expire, each
// at its own deadline.
func TestHeartbeaterArmsOneClockTimerForAllNodes(t *testing.T) {
	const n = 1000
	store := newFakeState()
	clock := clock.NewFake(testEpoch)
	deps := &commitLatencyWriter{clock: clock}
	cfg := testConfig(clock, 1)
	cfg.State, cfg.Writer = store, deps
	cfg.MaxNodeDownPerSecond = 1e6
	h := New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	defer func() { cancel(); <-done }()
	wait.Until(t, 5*time.Second, "the watchdog to be armed", func() bool { return clock.Pending() >= 1 })

	for i := 0; i < n; i++ {
		id := fmt.Sprintf("n%04d", i)
		store.upsertNode(testNode(id))
		// Deadlines spread over 1..1000s, armed latest first, so that
		// every arming moves the earliest deadline (the worst case for
		// re-arming the wake).
		h.arm(id, time.Duration(n-i)*time.Second)
	}
	if got := h.Tracked(); got != n {
		t.Fatalf("%d nodes tracked; want %d", got, n)
	}
	if got := clock.Pending(); got > 3 {
		t.Fatalf("%d clock timers pending for %d nodes; want the wake and the watchdog: a timer per node again", got, n)
	}

	// Half the deadlines pass: exactly the first half of the nodes are
	// due, each at its own deadline, and the wake serves the rest.
	clock.Advance(time.Duration(n/2)*time.Second + time.Millisecond)
	if got := h.Tracked(); got != n/2 {
		t.Fatalf("%d nodes still tracked after %ds; want %d", got, n/2, n/2)
	}
	if _, ok := h.Deadline("n0999"); ok {
		t.Fatal("n0999 (deadline 1s) is still tracked")
	}
	if d, ok := h.Deadline("n0000"); !ok || !d.Equal(testEpoch.Add(n*time.Second)) {
		t.Fatalf("n0000's deadline %v (%v); want its own, 1000s after the start", d, ok)
	}
	if got := clock.Pending(); got > 3 {
		t.Fatalf("%d clock timers pending for %d nodes after half expired", got, n/2)
	}
	wait.Until(t, 10*time.Second, "the expired half to be marked down", func() bool { return deps.marked() == n/2 },
		wait.Stepping(func() { clock.Advance(time.Millisecond) })) // the loop's pacing

	// A heartbeat moves a node's deadline; clearing forgets it. Once
	// every node is gone the heartbeater holds no clock timer but the
	// watchdog.
	for i := 0; i < n/2; i++ {
		h.Clear(fmt.Sprintf("n%04d", i))
	}
	// The run loop may still pace its last batch on a timer of its own;
	// stepping the clock lets that one pass, but not a wake left armed
	// at a later deadline.
	wait.Until(t, 10*time.Second, "only the watchdog to be pending with no nodes tracked", func() bool { return clock.Pending() == 1 },
		wait.Stepping(func() { clock.Advance(time.Millisecond) }))
}

// liveHeap is HeapAlloc after two collections: what is reachable.
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkHeartbeaterHeapPerNode measures the heap the heartbeater holds
// per node it tracks, with the real clock (B/node): a deadline per node
// of a fleet, re-armed by every heartbeat.
func BenchmarkHeartbeaterHeapPerNode(b *testing.B) {
	const n = 10000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("node-%05d", i)
	}
	var perNode float64
	for i := 0; i < b.N; i++ {
		h := New(testConfig(clock.Real(), 1))
		h.mu.Lock()
		h.enabled = true
		h.mu.Unlock()
		before := liveHeap()
		for j, id := range ids {
			h.arm(id, time.Hour+time.Duration(j)*time.Millisecond)
		}
		// Every node heartbeats once more: re-arming must not grow it.
		for _, id := range ids {
			h.arm(id, 2*time.Hour)
		}
		after := liveHeap()
		perNode = float64(int64(after)-int64(before)) / n
		if h.Tracked() != n {
			b.Fatalf("%d tracked; want %d", h.Tracked(), n)
		}
		h.SetEnabled(false)
	}
	b.ReportMetric(perNode, "B/node")
}

// A node's deadline keeps the store's copy of its ID, not the copy the
// request that armed it decoded: the deadline lives as long as the node,
// and the request's copy would be a second one per node. Only the real
// state store can show whose copy is kept, so this test uses it, with the
// interning the server wires in.
func TestHeartbeaterKeepsTheStoresCopyOfANodeID(t *testing.T) {
	store, err := state.NewStateStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	clock := clock.NewFake(testEpoch)
	cfg := testConfig(clock, 1)
	cfg.InternID = state.InternString
	h := New(cfg)
	h.mu.Lock()
	h.enabled = true
	h.mu.Unlock()
	if err := store.Write(1, func(tx *state.Txn) error { return tx.UpsertNode(testNode("keeps-the-stores-id"), nil) }); err != nil {
		t.Fatal(err)
	}
	stored, _ := store.NodeByID(nil, "keeps-the-stores-id")
	fromRequest := strings.Clone(stored.ID)
	h.arm(fromRequest, time.Minute)
	h.mu.Lock()
	nd := h.timers[stored.ID]
	var key string
	for k := range h.timers {
		key = k
	}
	h.mu.Unlock()
	if nd == nil || len(h.timers) != 1 {
		t.Fatalf("the node's deadline is not armed: %d deadlines", len(h.timers))
	}
	if unsafe.StringData(nd.nodeID) != unsafe.StringData(stored.ID) || unsafe.StringData(key) != unsafe.StringData(stored.ID) {
		t.Error("the deadline keeps the request's copy of the node ID")
	}
}

// The leader keeps a nodeDeadline per node: it must stay in the 48-byte
// size class (a time.Time and two ints put it in the 64-byte one).
func TestNodeDeadlineFitsFortyEightBytes(t *testing.T) {
	if size := unsafe.Sizeof(nodeDeadline{}); size > 48 {
		t.Fatalf("a nodeDeadline takes %d bytes, more than 48", size)
	}
}
