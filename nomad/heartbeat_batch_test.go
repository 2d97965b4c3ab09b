package nomad

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/nomad/state"

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

// fsmHeartbeatDeps commits the heartbeater's batches through a real FSM,
// telling the test each batch's nodes and waiting for its go-ahead before
// applying.
type fsmHeartbeatDeps struct {
	fsm     *FSM
	index   uint64
	batches chan []string
	gate    chan struct{}
}

func (d *fsmHeartbeatDeps) State() *state.StateStore { return d.fsm.State() }

func (d *fsmHeartbeatDeps) ApplyNodeStatuses(req *structs.NodeBatchUpdateStatusRequest) ([]string, error) {
	var ids []string
	for _, u := range req.Updates {
		ids = append(ids, u.NodeID)
	}
	d.batches <- ids
	<-d.gate
	buf, err := encodeMsg(structs.NodeBatchUpdateStatusRequestType, req)
	if err != nil {
		return nil, err
	}
	d.index++
	resp := d.fsm.Apply(&raft.Log{Index: d.index, Type: raft.LogCommand, Data: buf})
	if err, ok := resp.(error); ok {
		return nil, err
	}
	return resp.(*structs.NodeBatchUpdateStatusResponse).Skipped, nil
}

// A node whose timer expired, and which heartbeats while it waits in the
// queue behind a batch being committed, is left out of the next batch and
// stays ready; the node queued with it that stayed silent goes down.
func TestANodeThatHeartbeatsWhileQueuedStaysReady(t *testing.T) {
	f := testFSM(t)
	for i, id := range []string{"a", "b", "c"} {
		if err := f.State().UpsertNode(uint64(i+1), itNode(id)); err != nil {
			t.Fatal(err)
		}
	}
	deps := &fsmHeartbeatDeps{fsm: f, index: 10, batches: make(chan []string, 1), gate: make(chan struct{})}
	clock := clock.NewFake(time.Unix(1_800_000_000, 0))
	h := newHeartbeater(deps, testHeartbeatConfig(clock, 1)) // failover 300s, 1,000 nodes/s
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.run(ctx) }()
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
	unlock := h.lockNode("b")
	h.resetTTL("b", 3)
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
	WaitFor(t, 5*time.Second, func() (bool, string) {
		return nodeStatusIn(f, "c") == structs.NodeStatusDown, "c is " + nodeStatusIn(f, "c")
	})
	if st := nodeStatusIn(f, "b"); st != structs.NodeStatusReady {
		t.Fatalf("b heartbeated while queued and is %s", st)
	}
	if st := nodeStatusIn(f, "a"); st != structs.NodeStatusDown {
		t.Fatalf("a is %s", st)
	}
	if !h.armed("b") {
		t.Fatal("b's heartbeat timer is gone")
	}
}

func nodeStatusIn(f *FSM, id string) string {
	n, err := f.State().NodeByID(nil, id)
	if err != nil || n == nil {
		return ""
	}
	return n.Status
}

// On a real server, a node of a batch that heartbeats after the batch was
// decided but before it committed waits for the commit and writes itself
// ready again; the silent nodes of its batch stay down.
func TestAHeartbeatRacingABatchLeavesItsNodeReady(t *testing.T) {
	clock := clock.NewFake(time.Unix(1_800_000_000, 0))
	deps := &steppingHeartbeatDeps{}
	s := testServerWith(t, func(c *Config) {
		c.Clock = clock
		c.MinHeartbeatTTL = 10 * time.Second
		c.HeartbeatGrace = 5 * time.Second
	}, serverOptions{wrapHeartbeaterDeps: deps.wrap})
	WaitForLeader(t, 5*time.Second, s)
	nodes := []*structs.Node{itNode("n1"), itNode("n2"), itNode("n3")}
	for _, n := range nodes {
		registerNode(t, s, n)
	}
	racer := nodes[1]
	h := s.heartbeats
	reached := make(chan struct{})
	var once sync.Once
	beat := make(chan error, 1)
	deps.beforeApply(func(id string) {
		if id != racer.ID {
			return
		}
		first := false
		once.Do(func() { first = true })
		if !first {
			return // marked again after its heartbeat's TTL ran out
		}
		close(reached)
		go func() { beat <- sendHeartbeat(s, racer) }()
		// Hold the batch until the heartbeat waits for the node's lock
		// (not t.Fatal here: this is the heartbeater's goroutine).
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for deadline := time.Now().Add(10 * time.Second); h.nodeLocks.contenders(id) < 2 && time.Now().Before(deadline); {
			<-tick.C
		}
	})
	// Every TTL is at most 2*10s + 5s grace. Then the loop paces its
	// batches (50ms a node): move the fake clock on in such steps until
	// each silent node has been marked, the racer once.
	clock.Advance(26 * time.Second)
	raced := false
	silentDown := func() bool {
		return nodeStatus(s, nodes[0].ID) == structs.NodeStatusDown && nodeStatus(s, nodes[2].ID) == structs.NodeStatusDown
	}
	for deadline := time.Now().Add(20 * time.Second); !raced || !silentDown(); {
		if time.Now().After(deadline) {
			t.Fatalf("raced %v; statuses %s %s %s", raced,
				nodeStatus(s, nodes[0].ID), nodeStatus(s, racer.ID), nodeStatus(s, nodes[2].ID))
		}
		select {
		case err := <-beat:
			if err != nil {
				t.Fatalf("heartbeat: %v", err)
			}
			raced = true
		case <-time.After(5 * time.Millisecond):
			select {
			case <-reached:
				if !raced {
					continue // the batch holds the racer: no time passes meanwhile
				}
			default:
			}
			clock.Advance(50 * time.Millisecond)
		}
	}
	if st := nodeStatus(s, racer.ID); st != structs.NodeStatusReady {
		t.Fatalf("the node that heartbeated is %s", st)
	}
	if got := lastNodeEvent(s, racer.ID); got != "Node status down -> ready" {
		t.Fatalf("its batch committed first, so the heartbeat must have written ready again; last event %q", got)
	}
}

// A new leader must not mark a node down for a heartbeat that is not due
// yet: when the fleet's TTLs (up to twice the base, plus grace) are longer
// than the configured failover TTL, the failover window stretches to them.
func TestFailoverWindowCoversTheLongestTTLHandedOut(t *testing.T) {
	const n = 30
	h, clock, deps, stop := func() (*heartbeater, *clock.Fake, *commitLatencyDeps, func()) {
		store, err := state.NewStateStore(nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if err := store.UpsertNode(uint64(i+1), itNode(fmt.Sprintf("n%03d", i))); err != nil {
				t.Fatal(err)
			}
		}
		clock := clock.NewFake(time.Unix(1_800_000_000, 0))
		deps := &commitLatencyDeps{store: store, clock: clock}
		cfg := testHeartbeatConfig(clock, 1)
		// 30 nodes at one heartbeat a second: a base TTL of 30s, so a
		// client may hold a TTL of up to 60s, plus 5s grace.
		cfg.MaxHeartbeatsPerSecond = 1
		cfg.FailoverHeartbeatTTL = 30 * time.Second
		h := newHeartbeater(deps, cfg)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); h.run(ctx) }()
		if !waitTracked(h, clock, n, 5*time.Second) {
			t.Fatal("the heartbeater armed no failover timers")
		}
		return h, clock, deps, func() { cancel(); <-done }
	}()
	defer stop()
	// Timers fire inside Advance, so the count of tracked nodes after it
	// is exact.
	clock.Advance(65*time.Second - time.Millisecond)
	if got := h.tracked(); got != n {
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
