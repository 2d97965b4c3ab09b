package checks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// flakyServer answers 200 or 500 as told, counting requests.
type flakyServer struct {
	*httptest.Server
	failing atomic.Bool
	hits    atomic.Int64
}

func newFlakyServer(t *testing.T) *flakyServer {
	f := &flakyServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.hits.Add(1)
		if f.failing.Load() {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *flakyServer) spec(name string) Spec {
	return Spec{ID: name, Name: name, Type: TypeHTTP, Mode: ModeHealthiness, Service: "web", Task: "app",
		Address: f.Listener.Addr().String(), Interval: 10 * time.Second, Timeout: 5 * time.Second, InitialStatus: StatusPending}
}

func TestRunnerProbesEachIntervalAndTellsOfChanges(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	srv := newFlakyServer(t)
	var changes atomic.Int64
	r := New(Config{Clock: clk, OnChange: func() { changes.Add(1) }}, []Spec{srv.spec("c1")})
	if r.Healthy() || r.Results()["c1"].Status != StatusPending {
		t.Fatalf("before the first probe: %+v", r.Results())
	}
	r.Start()
	defer r.Stop()
	if !r.Started() {
		t.Fatal("not started")
	}
	testutil.WaitFor(t, "first probe", func() bool { return r.Results()["c1"].Status == StatusSuccess })
	if !r.Healthy() || changes.Load() != 1 {
		t.Fatalf("healthy %v, %d changes", r.Healthy(), changes.Load())
	}
	res := r.Results()["c1"]
	if res.ID != "c1" || res.Check != "c1" || res.Service != "web" || res.Task != "app" || res.Mode != ModeHealthiness ||
		res.StatusCode != 200 || res.Timestamp != 1_000_000 {
		t.Fatalf("result %+v", res)
	}

	// The next probe waits for the interval on the clock.
	if !clk.WaitForTimers(1, 5*time.Second) {
		t.Fatal("the check is not waiting for its interval")
	}
	srv.failing.Store(true)
	clk.Advance(9 * time.Second)
	if srv.hits.Load() != 1 {
		t.Fatalf("probed %d times before the interval passed", srv.hits.Load())
	}
	clk.Advance(time.Second)
	testutil.WaitFor(t, "failing", func() bool { return r.Results()["c1"].Status == StatusFailure })
	if r.Healthy() || changes.Load() != 2 || r.Results()["c1"].StatusCode != 500 {
		t.Fatalf("healthy %v, %d changes, %+v", r.Healthy(), changes.Load(), r.Results()["c1"])
	}

	// The same status again is no change.
	if !clk.WaitForTimers(1, 5*time.Second) {
		t.Fatal("the check is not waiting for its interval")
	}
	clk.Advance(10 * time.Second)
	testutil.WaitFor(t, "third probe", func() bool { return srv.hits.Load() == 3 && clk.Pending() == 1 })
	if changes.Load() != 2 {
		t.Fatalf("%d changes after a probe that changed nothing", changes.Load())
	}
}

func TestRunnerHealthCountsHealthinessChecksOnly(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	good, bad := newFlakyServer(t), newFlakyServer(t)
	bad.failing.Store(true)
	ready := bad.spec("ready")
	ready.Mode = ModeReadiness
	r := New(Config{Clock: clk}, []Spec{good.spec("good"), ready})
	r.Start()
	defer r.Stop()
	testutil.WaitFor(t, "both probed", func() bool {
		res := r.Results()
		return res["good"].Status == StatusSuccess && res["ready"].Status == StatusFailure
	})
	if !r.Healthy() {
		t.Fatal("a failing readiness check must not make the alloc unhealthy")
	}
	var none *Runner
	if !none.Healthy() || none.Len() != 0 || len(none.Results()) != 0 {
		t.Fatal("an alloc without checks is healthy")
	}
	none.Start()
	none.Stop()
}

func TestRunnerRestartsTheTaskAtTheCheckRestartLimit(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	srv := newFlakyServer(t)
	srv.failing.Store(true)
	s := srv.spec("c1")
	s.Restart = &structs.CheckRestart{Limit: 2, Grace: 15 * time.Second}
	var mu sync.Mutex
	var restarts []string
	r := New(Config{Clock: clk, Restart: func(ctx context.Context, task, reason string) error {
		mu.Lock()
		restarts = append(restarts, task+": "+reason)
		mu.Unlock()
		return nil
	}}, []Spec{s})
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(restarts) }
	r.Start()
	defer r.Stop()
	// Probes at 0 and 10s are in the grace period; 20s and 30s count.
	for i, want := range []int{0, 0, 0, 1} {
		testutil.WaitFor(t, "probe", func() bool { return srv.hits.Load() == int64(i+1) && clk.Pending() == 1 })
		if got := count(); got != want {
			t.Fatalf("after probe %d: %d restarts, want %d", i+1, got, want)
		}
		clk.Advance(10 * time.Second)
	}
	mu.Lock()
	defer mu.Unlock()
	if restarts[0] != `app: healthcheck: check "c1" unhealthy` {
		t.Fatalf("restart %q", restarts[0])
	}
}

func TestRunnerStopEndsTheChecks(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	srv := newFlakyServer(t)
	r := New(Config{Clock: clk}, []Spec{srv.spec("c1"), srv.spec("c2")})
	r.Start()
	testutil.WaitFor(t, "probes", func() bool { return srv.hits.Load() == 2 && clk.Pending() == 2 })
	r.Stop()
	r.Stop()
	r.Start()
	if r.Started() {
		t.Fatal("started after Stop")
	}
	clk.Advance(time.Minute)
	if clk.Pending() != 0 || srv.hits.Load() != 2 {
		t.Fatalf("after Stop: %d waiters, %d probes", clk.Pending(), srv.hits.Load())
	}
	if r.Results()["c1"].Status != StatusSuccess {
		t.Fatal("results must stay readable after Stop")
	}
}
