package heartbeat

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/structs"
)

// A thousand-node disconnect must not cost a thousand raft entries: a
// burst of expiries is marked in batches of at most a second's worth of
// nodes at MaxNodeDownPerSecond, each node once.
func TestABurstOfExpiriesIsMarkedInFewEntries(t *testing.T) {
	const n, rate = 100, 20
	clock, deps, stop := startSilentFleet(t, n, rate, 40*time.Millisecond)
	defer stop()
	drivePacing(t, clock, deps, n)
	writes := deps.recorded()
	seen := map[string]bool{}
	for i, w := range writes {
		if len(w.nodes) > rate {
			t.Fatalf("write %d marked %d nodes; a batch is at most a second's worth (%d)", i, len(w.nodes), rate)
		}
		for _, id := range w.nodes {
			if seen[id] {
				t.Fatalf("node %s marked twice", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != n {
		t.Fatalf("%d of %d nodes marked", len(seen), n)
	}
	// The first write may take only what had expired when the loop woke;
	// after it, a full second's worth each: 1 + 100/20.
	if max := 1 + n/rate; len(writes) > max {
		t.Fatalf("%d nodes took %d raft entries; want at most %d", n, len(writes), max)
	}
}

// The rate keeps meaning nodes per second, whatever a commit costs: in
// every stretch of writes, the nodes marked are at most the rate times the
// time it took. When a commit takes longer than a second (a loaded
// three-server cluster), batches grow so the rate is still reached, where
// one node per entry would have marked fewer than one a second.
func TestNodeDownRateHoldsInNodesPerSecond(t *testing.T) {
	const n, rate = 100, 20
	for _, latency := range []time.Duration{0, 40 * time.Millisecond, 1500 * time.Millisecond} {
		t.Run(fmt.Sprintf("commit_%s", latency), func(t *testing.T) {
			clock, deps, stop := startSilentFleet(t, n, rate, latency)
			defer stop()
			drivePacing(t, clock, deps, n)
			writes := deps.recorded()
			for i := range writes {
				nodes := 0
				for j := i + 1; j < len(writes); j++ {
					nodes += len(writes[j-1].nodes)
					took := writes[j].start.Sub(writes[i].start)
					if allowed := time.Duration(nodes) * time.Second / rate; took < allowed {
						t.Fatalf("writes %d..%d marked %d nodes in %s; at %d/s that takes %s", i, j-1, nodes, took, rate, allowed)
					}
				}
			}
			// And it keeps up: from the second write on (the first takes
			// what had fired when the loop woke), the last write starts no
			// later than the rate allows for the nodes before it, plus
			// one commit.
			if len(writes) < 3 {
				return
			}
			last := writes[len(writes)-1]
			took := last.start.Sub(writes[1].start)
			for i, w := range writes {
				t.Logf("write %d at %s: %d nodes", i, w.start.Sub(writes[0].start), len(w.nodes))
			}
			if limit := time.Duration(n-len(writes[0].nodes)-len(last.nodes))*time.Second/rate + latency; took > limit {
				t.Fatalf("%d nodes took %s to start their last write (%d writes); at %d/s with %s commits, want at most %s",
					n, took, len(writes), rate, latency, limit)
			}
		})
	}
}

// gatedWriter commits the heartbeater's batches to a fakeState as the
// FSM does, telling the test each batch's nodes and waiting for its
// go-ahead before applying.
type gatedWriter struct {
	state   *fakeState
	batches chan []string
	gate    chan struct{}
}

func (w *gatedWriter) ApplyNodeStatuses(req *structs.NodeBatchUpdateStatusRequest) ([]string, error) {
	var ids []string
	for _, u := range req.Updates {
		ids = append(ids, u.NodeID)
	}
	w.batches <- ids
	<-w.gate
	return w.state.apply(req), nil
}

// A node whose timer expired, and which heartbeats while it waits in the
// queue behind a batch being committed, is left out of the next batch and
// stays ready; the node queued with it that stayed silent goes down.
func TestANodeThatHeartbeatsWhileQueuedStaysReady(t *testing.T) {
	f := newFakeState(testNode("a"), testNode("b"), testNode("c"))
	deps := &gatedWriter{state: f, batches: make(chan []string, 1), gate: make(chan struct{})}
	clock := clock.NewFake(testEpoch)
	cfg := testConfig(clock, 1) // failover 300s, 1,000 nodes/s
	cfg.State, cfg.Writer = f, deps
	h := New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	defer func() { cancel(); close(deps.gate); <-done }()
	if !waitTracked(h, clock, 3, 5*time.Second) { // three nodes, with the wake and the watchdog
		t.Fatal("the heartbeater armed no failover timers")
	}

	// a's timer runs out first; its batch is held before the commit.
	h.arm("a", time.Second)
	clock.Advance(time.Second)
	if got := <-deps.batches; strings.Join(got, ",") != "a" {
		t.Fatalf("first batch %v; want [a]", got)
	}
	// Meanwhile b and c expire and queue; then b heartbeats, as
	// Node.UpdateStatus does, under its lock.
	clock.Advance(300 * time.Second)
	unlock := h.LockNode("b")
	h.ResetTTL("b", 3)
	unlock()
	deps.gate <- struct{}{}

	// The first commit took 300s of fake time, past its 1ms interval, so
	// the loop takes the queue at once: only c is marked.
	var second []string
	select {
	case second = <-deps.batches:
	case <-time.After(10 * time.Second):
		t.Fatal("no second batch")
	}
	sort.Strings(second)
	if strings.Join(second, ",") != "c" {
		t.Fatalf("second batch %v; want [c]: b heartbeated while queued", second)
	}
	deps.gate <- struct{}{}
	wait.For(t, 5*time.Second, func() (bool, string) {
		return f.status("c") == structs.NodeStatusDown, "c is " + f.status("c")
	})
	if st := f.status("b"); st != structs.NodeStatusReady {
		t.Fatalf("b heartbeated while queued and is %s", st)
	}
	if st := f.status("a"); st != structs.NodeStatusDown {
		t.Fatalf("a is %s", st)
	}
	if !h.Armed("b") {
		t.Fatal("b's heartbeat timer is gone")
	}
}

// A new leader must not mark a node down for a heartbeat that is not due
// yet: when the fleet's TTLs (up to twice the base, plus grace) are longer
// than the configured failover TTL, the failover window stretches to them.
func TestFailoverWindowCoversTheLongestTTLHandedOut(t *testing.T) {
	const n = 30
	h, clock, deps, stop := func() (*Heartbeater, *clock.Fake, *commitLatencyWriter, func()) {
		store := newFakeState()
		for i := 0; i < n; i++ {
			store.upsertNode(testNode(fmt.Sprintf("n%03d", i)))
		}
		clock := clock.NewFake(testEpoch)
		deps := &commitLatencyWriter{clock: clock}
		cfg := testConfig(clock, 1)
		cfg.State, cfg.Writer = store, deps
		// 30 nodes at one heartbeat a second: a base TTL of 30s, so a
		// client may hold a TTL of up to 60s, plus 5s grace.
		cfg.MaxHeartbeatsPerSecond = 1
		cfg.FailoverHeartbeatTTL = 30 * time.Second
		h := New(cfg)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); h.Run(ctx) }()
		if !waitTracked(h, clock, n, 5*time.Second) {
			t.Fatal("the heartbeater armed no failover timers")
		}
		return h, clock, deps, func() { cancel(); <-done }
	}()
	defer stop()
	// Timers fire inside Advance, so the count of tracked nodes after it
	// is exact.
	clock.Advance(65*time.Second - time.Millisecond)
	if got := h.Tracked(); got != n {
		t.Fatalf("%d nodes tracked just before 65s; want all %d: a node was expired before its TTL could run out", got, n)
	}
	if deps.marked() != 0 {
		t.Fatalf("%d nodes marked down before the longest TTL plus grace", deps.marked())
	}
	drivePacingFrom(t, clock, deps, n, time.Millisecond)
}

// A batch whose nodes carry many evals is committed as several entries,
// each within the eval bound, in order, every node once; a node with more
// evals than the bound goes alone.
func TestNodeDownBatchesSplitByEvals(t *testing.T) {
	upd := func(id string, evals int) *structs.NodeUpdateStatusRequest {
		return &structs.NodeUpdateStatusRequest{NodeID: id, Evals: make([]*structs.Evaluation, evals)}
	}
	in := []*structs.NodeUpdateStatusRequest{upd("a", 3), upd("b", 4), upd("c", 2), upd("d", 12), upd("e", 0), upd("f", 10)}
	var got []string
	for _, chunk := range chunkByEvals(in, 10) {
		var ids []string
		n := 0
		for _, u := range chunk {
			ids = append(ids, u.NodeID)
			n += len(u.Evals)
		}
		if n > 10 && len(chunk) > 1 {
			t.Fatalf("chunk %v holds %d evals, over the bound of 10", ids, n)
		}
		got = append(got, strings.Join(ids, ","))
	}
	if want := "a,b,c|d|e,f"; strings.Join(got, "|") != want {
		t.Fatalf("chunks %q; want %q", strings.Join(got, "|"), want)
	}
}
