package heartbeat

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// commitLatencyWriter commits a batch of status changes in `latency` of
// the fake clock's time, as raft does (commit + FSM apply), recording
// when each write started and the nodes it carried.
type commitLatencyWriter struct {
	clock   *clock.Fake
	latency time.Duration
	// hold, if set, keeps the first write waiting until it is closed, so
	// every timer of a burst has fired before the loop looks again.
	hold   chan struct{}
	mu     sync.Mutex
	writes []recordedWrite
}

type recordedWrite struct {
	start time.Time
	nodes []string
}

func (d *commitLatencyWriter) ApplyNodeStatuses(req *structs.NodeBatchUpdateStatusRequest) ([]string, error) {
	w := recordedWrite{start: d.clock.Now()}
	for _, u := range req.Updates {
		w.nodes = append(w.nodes, u.NodeID)
	}
	d.mu.Lock()
	first := len(d.writes) == 0
	d.writes = append(d.writes, w)
	d.mu.Unlock()
	if first && d.hold != nil {
		<-d.hold
	}
	d.clock.Advance(d.latency)
	return nil, nil
}

func (d *commitLatencyWriter) recorded() []recordedWrite {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]recordedWrite(nil), d.writes...)
}

// marked counts the nodes written so far.
func (d *commitLatencyWriter) marked() int {
	n := 0
	for _, w := range d.recorded() {
		n += len(w.nodes)
	}
	return n
}

// startSilentFleet stores n ready nodes and runs a heartbeater over them
// whose failover window is silentFleetFailover, marking at most rate nodes a second with
// commits of latency; the nodes never heartbeat. The returned stop ends
// the heartbeater.
func startSilentFleet(t *testing.T, n int, rate float64, latency time.Duration) (*clock.Fake, *commitLatencyWriter, func()) {
	t.Helper()
	store := newFakeState()
	for i := 0; i < n; i++ {
		store.upsertNode(testNode(fmt.Sprintf("n%03d", i)))
	}
	clock := clock.NewFake(testEpoch)
	deps := &commitLatencyWriter{clock: clock, latency: latency, hold: make(chan struct{})}
	cfg := testConfig(clock, 1)
	cfg.State, cfg.Writer = store, deps
	cfg.FailoverHeartbeatTTL = 10 * time.Second
	cfg.MaxNodeDownPerSecond = rate
	// Two goroutines move the fake clock here (the test, and the commit
	// twin), so a timer can fire after the clock has passed its deadline;
	// a grace this long keeps the stall detector, not under test here,
	// from taking that for a stall. No TTL comes from a heartbeat; the
	// failover window grows to twice the 10s base TTL plus this grace.
	cfg.HeartbeatGrace = time.Hour
	h := New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	// n failover deadlines, with the wake and the stall watchdog.
	if !waitTracked(h, clock, n, 5*time.Second) {
		cancel()
		<-done
		t.Fatal("the heartbeater armed no failover timers")
	}
	return clock, deps, func() { cancel(); <-done }
}

// drivePacing lets the fleet's failover TTL pass, then moves the fake
// clock 5ms at a time whenever the loop waits on its pacing timer (it and
// the watchdog pending) until want nodes are marked. A loop that needs no
// wait (its commit outlasted the interval) goes on by itself.
func drivePacing(t *testing.T, clock *clock.Fake, deps *commitLatencyWriter, want int) {
	t.Helper()
	drivePacingFrom(t, clock, deps, want, silentFleetFailover)
}

// silentFleetFailover is the failover window of startSilentFleet's nodes.
const silentFleetFailover = 2*10*time.Second + time.Hour

// drivePacingFrom is drivePacing with the first step's length.
func drivePacingFrom(t *testing.T, clock *clock.Fake, deps *commitLatencyWriter, want int, first time.Duration) {
	t.Helper()
	clock.Advance(first)
	if deps.hold != nil {
		close(deps.hold)
	}
	deadline := time.Now().Add(30 * time.Second)
	for deps.marked() < want {
		if time.Now().After(deadline) {
			t.Fatalf("the loop stopped after %d of %d nodes", deps.marked(), want)
		}
		if clock.WaitForTimers(2, 20*time.Millisecond) {
			clock.Advance(5 * time.Millisecond)
		}
	}
}

// MaxNodeDownPerSecond is a ceiling paced from each write's start: with
// 20/s (50ms) and commits of 40ms, a write of k nodes is followed by the
// next one k*50ms after its start, not k*50ms plus the commit (commit
// latency added to the interval held a single server to ~11/s in the
// cluster benchmark's storm).
func TestNodeDownRateCountsTheCommitInTheInterval(t *testing.T) {
	const n = 5
	clock, deps, stop := startSilentFleet(t, n, 20, 40*time.Millisecond)
	defer stop()
	drivePacing(t, clock, deps, n)
	writes := deps.recorded()
	for i := 1; i < len(writes); i++ {
		want := time.Duration(len(writes[i-1].nodes)) * 50 * time.Millisecond
		if gap := writes[i].start.Sub(writes[i-1].start); gap != want {
			t.Fatalf("write %d started %s after the one before, which marked %d nodes; want %s (a 40ms commit counted in it)",
				i, gap, len(writes[i-1].nodes), want)
		}
	}
}
