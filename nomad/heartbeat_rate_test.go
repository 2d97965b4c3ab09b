package nomad

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// commitLatencyDeps commits a status change in `latency` of the fake
// clock's time, as raft does (commit + FSM apply), recording when each
// write started.
type commitLatencyDeps struct {
	store   *state.StateStore
	clock   *FakeClock
	latency time.Duration
	mu      sync.Mutex
	starts  []time.Time
}

func (d *commitLatencyDeps) State() *state.StateStore { return d.store }

func (d *commitLatencyDeps) ApplyNodeStatus(*structs.NodeUpdateStatusRequest) error {
	d.mu.Lock()
	d.starts = append(d.starts, d.clock.Now())
	d.mu.Unlock()
	d.clock.Advance(d.latency)
	return nil
}

func (d *commitLatencyDeps) started() []time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]time.Time(nil), d.starts...)
}

// MaxNodeDownPerSecond is a ceiling paced from each write's start: with
// 20/s (50ms) and commits of 40ms, silent nodes are marked down 50ms
// apart, not 90ms (commit latency added to the interval, which held a
// single server to ~11/s in the cluster benchmark's storm).
func TestNodeDownRateCountsTheCommitInTheInterval(t *testing.T) {
	store, err := state.NewStateStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	for i := 0; i < n; i++ {
		if err := store.UpsertNode(uint64(i+1), itNode(fmt.Sprintf("n%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	clock := NewFakeClock(time.Unix(1_800_000_000, 0))
	deps := &commitLatencyDeps{store: store, clock: clock, latency: 40 * time.Millisecond}
	cfg := testHeartbeatConfig(clock, 1)
	cfg.FailoverHeartbeatTTL = 10 * time.Second
	cfg.MaxNodeDownPerSecond = 20
	h := newHeartbeater(deps, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.run(ctx) }()
	defer func() { cancel(); <-done }()

	// n failover timers plus the stall watchdog.
	if !clock.WaitForTimers(n+1, 5*time.Second) {
		t.Fatal("the heartbeater armed no failover timers")
	}
	clock.Advance(10 * time.Second)
	// Then move time only while the loop waits on its pacing timer (the
	// watchdog and that timer pending), 5ms at a time.
	for len(deps.started()) < n {
		if !clock.WaitForTimers(2, 5*time.Second) {
			t.Fatalf("the loop stopped after %d of %d nodes", len(deps.started()), n)
		}
		clock.Advance(5 * time.Millisecond)
	}
	starts := deps.started()
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap != 50*time.Millisecond {
			t.Fatalf("write %d started %s after the one before; want the 50ms interval (a 40ms commit counted in it)", i, gap)
		}
	}
}
