package nomad

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// memHeartbeatDeps is an in-memory twin of the server for the heartbeater:
// a real state store, and status changes handed to the test instead of
// raft.
type memHeartbeatDeps struct {
	store   *state.StateStore
	applied chan *structs.NodeUpdateStatusRequest
}

func (d *memHeartbeatDeps) State() *state.StateStore { return d.store }

// ApplyNodeStatuses hands each update of the batch to the test.
func (d *memHeartbeatDeps) ApplyNodeStatuses(req *structs.NodeBatchUpdateStatusRequest) ([]string, error) {
	for _, u := range req.Updates {
		d.applied <- u
	}
	return nil, nil
}

func testHeartbeatConfig(clock clock.Clock, seed int64) heartbeatConfig {
	return heartbeatConfig{
		MinHeartbeatTTL: 10 * time.Second, MaxHeartbeatsPerSecond: 50, HeartbeatGrace: 5 * time.Second,
		FailoverHeartbeatTTL: 300 * time.Second, MaxNodeDownPerSecond: 1000,
		Clock: clock, Rand: rand.New(rand.NewSource(seed)),
	}
}

// The TTL stagger comes from the injected source: the same seed gives the
// same TTLs, each within [base, 2*base).
func TestHeartbeatStaggerComesFromTheInjectedSeed(t *testing.T) {
	ttls := func(seed int64) []time.Duration {
		h := newHeartbeater(&memHeartbeatDeps{}, testHeartbeatConfig(clock.NewFake(time.Unix(1_800_000_000, 0)), seed))
		var out []time.Duration
		for i := 0; i < 20; i++ {
			ttl := h.resetTTL("n1", 1)
			if ttl < 10*time.Second || ttl >= 20*time.Second {
				t.Fatalf("ttl %s outside [10s, 20s)", ttl)
			}
			out = append(out, ttl)
		}
		return out
	}
	a, b, c := ttls(7), ttls(7), ttls(8)
	same, differs := true, false
	for i := range a {
		same = same && a[i] == b[i]
		differs = differs || a[i] != c[i]
	}
	if !same {
		t.Fatalf("one seed gave two TTL sequences:\n%v\n%v", a, b)
	}
	if !differs {
		t.Fatalf("seeds 7 and 8 gave the same 20 TTLs %v: the seed is not used", a)
	}
}

// Alone, with a twin of the server, the heartbeater marks a silent ready
// node down at the fake clock's time, with the status change carrying
// the time (the FSM may not read the clock).
func TestHeartbeaterAloneMarksASilentNodeDown(t *testing.T) {
	store, err := state.NewStateStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	node := itNode("n1")
	if err := store.UpsertNode(1, node); err != nil {
		t.Fatal(err)
	}
	clock := clock.NewFake(time.Unix(1_800_000_000, 0))
	deps := &memHeartbeatDeps{store: store, applied: make(chan *structs.NodeUpdateStatusRequest, 1)}
	h := newHeartbeater(deps, testHeartbeatConfig(clock, 1))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.run(ctx) }()
	defer func() { cancel(); <-done }()

	// run arms the failover timer (plus the stall watchdog).
	if !clock.WaitForTimers(2, 5*time.Second) {
		t.Fatal("the heartbeater armed no timer for the node")
	}
	clock.Advance(300 * time.Second)
	select {
	case req := <-deps.applied:
		if req.NodeID != node.ID || req.Status != structs.NodeStatusDown || req.UpdatedAt != clock.Now().Unix() {
			t.Fatalf("status change %+v; want %s down at %d", req, node.ID, clock.Now().Unix())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a node silent past its failover TTL was not marked down")
	}
}
