package nomad

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// gcLoopHarness runs runCoreGC on a fake clock with a Collect that
// reports each call and, for kinds a test holds, waits to be released. It
// learns of each run that ends and each tick skipped from the loop's
// debug log, through a sink on the logger the loop is given.
type gcLoopHarness struct {
	clock   *clock.Fake
	calls   chan gcCall
	ran     chan gcRan
	release map[gcKind]chan struct{}
	cancel  context.CancelFunc
	stopped chan struct{}
}

type gcCall struct {
	kind gcKind
	g    gcThresholds
	ctx  context.Context
}

type gcRan struct {
	kind    gcKind
	skipped bool
}

var gcTestStart = time.Unix(1_800_000_000, 0)

func startGCLoop(t *testing.T, hold ...gcKind) *gcLoopHarness {
	t.Helper()
	h := &gcLoopHarness{
		clock:   clock.NewFake(gcTestStart),
		calls:   make(chan gcCall, 16),
		ran:     make(chan gcRan, 16),
		release: map[gcKind]chan struct{}{},
		stopped: make(chan struct{}),
	}
	for _, k := range hold {
		h.release[k] = make(chan struct{})
	}
	logger := hclog.NewInterceptLogger(&hclog.LoggerOptions{Output: io.Discard})
	logger.RegisterSink(gcRanSink(h.ran))
	cfg := gcLoopConfig{
		Clock:  h.clock,
		Logger: logger,
		Intervals: map[gcKind]time.Duration{
			gcEvals: time.Minute, gcJobs: 2 * time.Minute, gcNodes: 3 * time.Minute, gcDeployments: 4 * time.Minute,
		},
		Thresholds: gcThresholds{eval: time.Hour, batchEval: 24 * time.Hour, job: 4 * time.Hour, node: 24 * time.Hour, deployment: time.Hour},
		Collect: func(ctx context.Context, kind gcKind, g gcThresholds) (uint64, error) {
			h.calls <- gcCall{kind, g, ctx}
			if ch, ok := h.release[kind]; ok {
				select {
				case <-ch:
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			}
			return 1, nil
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() {
		defer close(h.stopped)
		runCoreGC(ctx, cfg)
	}()
	t.Cleanup(h.stop)
	if !h.clock.WaitForTimers(len(gcKinds), 5*time.Second) {
		t.Fatalf("the loop armed %d timers; want one per kind", h.clock.Pending())
	}
	return h
}

// gcRanSink turns the loop's debug messages for a run that finished and
// a tick skipped into gcRan values.
type gcRanSink chan gcRan

func (s gcRanSink) Accept(_ string, _ hclog.Level, msg string, args ...any) {
	var kind gcKind
	for i := 0; i+1 < len(args); i += 2 {
		if k, ok := args[i+1].(gcKind); ok && args[i] == "kind" {
			kind = k
		}
	}
	switch msg {
	case gcLogFinished:
		s <- gcRan{kind: kind}
	case gcLogSkipped:
		s <- gcRan{kind: kind, skipped: true}
	}
}

func (h *gcLoopHarness) stop() {
	h.cancel()
	<-h.stopped
}

// expectRuns waits for the loop to report exactly want (in any order) and
// checks that no call is left over.
func (h *gcLoopHarness) expectRuns(t *testing.T, want ...gcRan) {
	t.Helper()
	left := map[gcRan]int{}
	for _, w := range want {
		left[w]++
	}
	deadline := time.After(5 * time.Second)
	for range want {
		select {
		case r := <-h.ran:
			if left[r] == 0 {
				t.Fatalf("the loop reported %+v; want %+v", r, want)
			}
			left[r]--
		case <-deadline:
			t.Fatalf("the loop reported too little; still waiting for %+v", left)
		}
	}
	select {
	case r := <-h.ran:
		t.Fatalf("the loop reported %+v beyond %+v", r, want)
	default:
	}
}

func (h *gcLoopHarness) nextCall(t *testing.T) gcCall {
	t.Helper()
	select {
	case c := <-h.calls:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no collection started")
		return gcCall{}
	}
}

// Each kind runs on its own interval, with the thresholds of the config
// and the clock's time at the tick; nothing runs before its interval.
func TestCoreGCLoopRunsEachKindOnItsInterval(t *testing.T) {
	h := startGCLoop(t)
	h.clock.Advance(59 * time.Second)
	select {
	case c := <-h.calls:
		t.Fatalf("a %s collection ran before any interval passed", c.kind)
	default:
	}
	// Minute by minute up to 4: evals every minute, jobs every 2,
	// nodes every 3, deployments every 4.
	want := [][]gcKind{
		{gcEvals},
		{gcEvals, gcJobs},
		{gcEvals, gcNodes},
		{gcEvals, gcJobs, gcDeployments},
	}
	for minute, kinds := range want {
		step := time.Minute
		if minute == 0 {
			step = time.Second
		}
		h.clock.Advance(step)
		for range kinds {
			c := h.nextCall(t)
			wantNow := gcTestStart.Add(time.Duration(minute+1) * time.Minute)
			if !c.g.now.Equal(wantNow) || c.g.force {
				t.Fatalf("minute %d: %s collection got now=%s force=%v; want now=%s, not forced", minute+1, c.kind, c.g.now, c.g.force, wantNow)
			}
			if c.g.eval != time.Hour || c.g.batchEval != 24*time.Hour || c.g.job != 4*time.Hour || c.g.node != 24*time.Hour || c.g.deployment != time.Hour {
				t.Fatalf("the collection got thresholds %+v; want the config's", c.g)
			}
		}
		wantRuns := make([]gcRan, len(kinds))
		for i, k := range kinds {
			wantRuns[i] = gcRan{kind: k}
		}
		h.expectRuns(t, wantRuns...)
		if !h.clock.WaitForTimers(len(gcKinds), 5*time.Second) {
			t.Fatalf("minute %d: the loop re-armed %d timers; want %d", minute+1, h.clock.Pending(), len(gcKinds))
		}
	}
}

// A tick that comes while the previous collection of its kind still runs
// is skipped; the next tick after it ends runs again.
func TestCoreGCLoopSkipsAKindWhoseLastRunStillGoesOn(t *testing.T) {
	h := startGCLoop(t, gcEvals)
	h.clock.Advance(time.Minute)
	if c := h.nextCall(t); c.kind != gcEvals {
		t.Fatalf("ran %s; want the eval collection", c.kind)
	}
	h.clock.WaitForTimers(len(gcKinds), 5*time.Second)
	h.clock.Advance(time.Minute) // evals still running: skipped; jobs run
	if c := h.nextCall(t); c.kind != gcJobs {
		t.Fatalf("ran %s; want only the job collection while evals still run", c.kind)
	}
	h.expectRuns(t, gcRan{kind: gcEvals, skipped: true}, gcRan{kind: gcJobs})
	select {
	case c := <-h.calls:
		t.Fatalf("a second %s collection started while the first ran", c.kind)
	default:
	}

	h.release[gcEvals] <- struct{}{}
	h.expectRuns(t, gcRan{kind: gcEvals})
	h.clock.WaitForTimers(len(gcKinds), 5*time.Second)
	h.clock.Advance(time.Minute) // minute 3: evals again, and nodes
	got := map[gcKind]bool{h.nextCall(t).kind: true, h.nextCall(t).kind: true}
	if !got[gcEvals] || !got[gcNodes] {
		t.Fatalf("minute 3 ran %v; want evals and nodes", got)
	}
	close(h.release[gcEvals])
	h.expectRuns(t, gcRan{kind: gcEvals}, gcRan{kind: gcNodes})
}

// Losing leadership ends the loop: a run under way sees its context end,
// the loop waits for it, and no timer of the loop is left armed.
func TestCoreGCLoopStopsWithItsContext(t *testing.T) {
	h := startGCLoop(t, gcEvals)
	h.clock.Advance(time.Minute)
	c := h.nextCall(t)
	h.stop()
	if c.ctx.Err() == nil {
		t.Fatal("the loop returned while its run's context was still live")
	}
	if n := h.clock.Pending(); n != 0 {
		t.Fatalf("%d timers left armed after the loop stopped", n)
	}
	h.clock.Advance(time.Hour)
	select {
	case c := <-h.calls:
		t.Fatalf("a %s collection ran after the loop stopped", c.kind)
	default:
	}
}

// The server runs the loop only while it leads: an old terminal eval is
// collected on the eval interval without a forced GC; after leadership is
// lost nothing is collected however much time passes; once leadership is
// won again the new term's loop collects.
func TestCoreGCLoopRunsOnlyWhileLeading(t *testing.T) {
	clock := clock.NewFake(gcTestStart)
	s := testServer(t, func(c *Config) {
		c.Clock = clock
		c.NumSchedulers = 0
		c.EvalGCThreshold, c.EvalGCInterval = time.Minute, 10*time.Second
	})
	WaitForLeader(t, 5*time.Second, s)
	job := itJob("web", 1)
	oldEval := func(id string) {
		t.Helper()
		ev := &structs.Evaluation{ID: id, Namespace: structs.DefaultNamespace, JobID: job.ID, Type: job.Type, Priority: 50,
			TriggeredBy: structs.EvalTriggerJobRegister, Status: structs.EvalStatusComplete, ModifyTime: clock.Now().Add(-time.Hour).UnixNano()}
		if _, _, err := s.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{ev}}); err != nil {
			t.Fatal(err)
		}
	}
	gone := func(id string) bool {
		ev, err := s.State().EvalByID(nil, id)
		if err != nil {
			t.Fatal(err)
		}
		return ev == nil
	}
	// Advance in steps until the eval is gone: the loop may not have
	// armed its timer when the first step comes.
	advanceUntilGone := func(id string) {
		t.Helper()
		WaitFor(t, 10*time.Second, func() (bool, string) {
			clock.Advance(10 * time.Second)
			return gone(id), "eval " + id + " is still there"
		})
	}

	oldEval("first")
	advanceUntilGone("first")

	s.revokeLeadership()
	oldEval("second")
	for range 10 {
		clock.Advance(time.Minute)
	}
	if gone("second") {
		t.Fatal("an eval was collected while the server did not lead")
	}

	s.leadershipChanged(true)
	advanceUntilGone("second")
}
