package heartbeat

import (
	"context"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// handingWriter hands each status change of a batch to the test instead
// of committing it.
type handingWriter struct {
	applied chan *structs.NodeUpdateStatusRequest
}

func (w *handingWriter) ApplyNodeStatuses(req *structs.NodeBatchUpdateStatusRequest) ([]string, error) {
	for _, u := range req.Updates {
		w.applied <- u
	}
	return nil, nil
}

// The TTL stagger comes from the injected source: the same seed gives the
// same TTLs, each within [base, 2*base).
func TestHeartbeatStaggerComesFromTheInjectedSeed(t *testing.T) {
	ttls := func(seed int64) []time.Duration {
		h := New(testConfig(clock.NewFake(testEpoch), seed))
		var out []time.Duration
		for i := 0; i < 20; i++ {
			ttl := h.ResetTTL("n1", 1)
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

// Alone, against fakes of the server, the heartbeater marks a silent ready
// node down at the fake clock's time, with the status change carrying
// the time (the FSM may not read the clock).
func TestHeartbeaterAloneMarksASilentNodeDown(t *testing.T) {
	node := testNode("n1")
	clock := clock.NewFake(testEpoch)
	writer := &handingWriter{applied: make(chan *structs.NodeUpdateStatusRequest, 1)}
	cfg := testConfig(clock, 1)
	cfg.State, cfg.Writer = newFakeState(node), writer
	h := New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// Run arms the failover timer (plus the stall watchdog).
	if !clock.WaitForTimers(2, 5*time.Second) {
		t.Fatal("the heartbeater armed no timer for the node")
	}
	clock.Advance(300 * time.Second)
	select {
	case req := <-writer.applied:
		if req.NodeID != node.ID || req.Status != structs.NodeStatusDown || req.UpdatedAt != clock.Now().Unix() {
			t.Fatalf("status change %+v; want %s down at %d", req, node.ID, clock.Now().Unix())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a node silent past its failover TTL was not marked down")
	}
}
