package taskrunner

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/clock"
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/drivers/rawexec"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/structs"
)

// recordingHook implements every stage and records each call, so a test
// can check when the runner calls what. prestart, if set, does the
// prestart's work.
type recordingHook struct {
	prestart func(ctx context.Context, req *PrestartRequest) error

	mu    sync.Mutex
	calls []string
	reqs  []*PrestartRequest
	posts []*PoststartRequest
	exits []*ExitedRequest
	ups   []*UpdateRequest
}

func (*recordingHook) Name() string { return "recorder" }

func (r *recordingHook) record(call string) {
	r.mu.Lock()
	r.calls = append(r.calls, call)
	r.mu.Unlock()
}

func (r *recordingHook) Prestart(ctx context.Context, req *PrestartRequest, _ *PrestartResponse) error {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	r.record("prestart")
	if r.prestart != nil {
		return r.prestart(ctx, req)
	}
	return nil
}

func (r *recordingHook) Poststart(_ context.Context, req *PoststartRequest) error {
	r.mu.Lock()
	r.posts = append(r.posts, req)
	r.mu.Unlock()
	r.record("poststart")
	return nil
}

func (r *recordingHook) Exited(_ context.Context, req *ExitedRequest) error {
	r.mu.Lock()
	r.exits = append(r.exits, req)
	r.mu.Unlock()
	r.record("exited")
	return nil
}

func (r *recordingHook) Stop(context.Context, *StopRequest) error {
	r.record("stop")
	return errors.New("a stop hook's error is only logged")
}

func (r *recordingHook) Update(_ context.Context, req *UpdateRequest) error {
	r.mu.Lock()
	r.ups = append(r.ups, req)
	r.mu.Unlock()
	r.record("update")
	return nil
}

func (r *recordingHook) sequence() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.calls, ",")
}

// withRecorder adds a recording hook after the task's own hooks.
func withRecorder(h *harness, r *recordingHook) *recordingHook {
	h.tr.hooks = append(h.tr.hooks, r)
	return r
}

func TestHooksAreCalledAtEachStageOfATasksLife(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	task := &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1s", "exit_code": 3},
		RestartPolicy: &structs.RestartPolicy{Attempts: 1, Interval: 10 * time.Minute, Delay: time.Second, Mode: structs.RestartPolicyModeFail}}
	h := newHarness(t, task, structs.JobTypeService, drv, clk)
	rec := withRecorder(h, &recordingHook{})
	newer := h.cfg.Alloc.Copy()
	newer.AllocModifyIndex = 7
	h.tr.UpdateAlloc(newer)
	h.run(t)
	testutil.WaitForWhile(t, "task to fail", h.dead, func() { clk.Advance(time.Second) })
	<-h.tr.Done()

	want := "update,prestart,poststart,exited,prestart,poststart,exited,stop"
	if got := rec.sequence(); got != want {
		t.Fatalf("hook calls %s, want %s", got, want)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.ups[0].Alloc != newer {
		t.Fatal("the update hook was not given the newer alloc")
	}
	req := rec.reqs[0]
	if req.Alloc != newer || req.Task.Name != "t" || req.TaskDir.Dir != h.dir.Task("t").Dir || req.AllocDir != h.dir {
		t.Fatalf("prestart request %+v", req)
	}
	// The hooks before it built the environment.
	if req.Env == nil || req.Env.Map()["NOMAD_ALLOC_ID"] != newer.ID {
		t.Fatalf("a later prestart hook did not get the environment the env hook built")
	}
	if p := rec.posts[0]; p.Handle == nil || p.Reattached || p.Alloc != newer {
		t.Fatalf("poststart request %+v", p)
	}
	if e := rec.exits[0]; e.Result == nil || e.Result.ExitCode != 3 {
		t.Fatalf("exited request %+v", e)
	}
}

func TestAFailingPrestartHookFailsTheStartUnderTheRestartPolicy(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	task := &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1s"},
		RestartPolicy: &structs.RestartPolicy{Attempts: 2, Interval: 10 * time.Minute, Delay: time.Second, Mode: structs.RestartPolicyModeFail}}
	h := newHarness(t, task, structs.JobTypeBatch, drv, clk)
	failing := withRecorder(h, &recordingHook{prestart: func(context.Context, *PrestartRequest) error {
		return &drivers.RecoverableError{Err: errors.New("not yet")}
	}})
	after := withRecorder(h, &recordingHook{})
	h.run(t)
	testutil.WaitForWhile(t, "task to fail", h.dead, func() { clk.Advance(time.Second) })
	<-h.tr.Done()
	s := h.tr.TaskState()
	if !s.Failed || s.Restarts != 2 || drv.Starts() != 0 {
		t.Fatalf("failed=%v restarts=%d starts=%d", s.Failed, s.Restarts, drv.Starts())
	}
	if got := failing.sequence(); got != "prestart,prestart,prestart,stop" {
		t.Fatalf("failing hook calls %s", got)
	}
	// A hook after the failing one never runs for a failed attempt.
	if got := after.sequence(); got != "stop" {
		t.Fatalf("hook after the failing one: calls %s, want only stop", got)
	}
}

// blockingHook waits in its prestart until the runner cancels it.
func blockingHook(entered chan<- struct{}) *recordingHook {
	return &recordingHook{prestart: func(ctx context.Context, _ *PrestartRequest) error {
		close(entered)
		<-ctx.Done()
		return &drivers.RecoverableError{Err: ctx.Err()}
	}}
}

func TestKillDuringAPrestartHookLeavesTheTaskKilled(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	h := newHarness(t, &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1s"}}, structs.JobTypeService, drv, clk)
	entered := make(chan struct{})
	rec := withRecorder(h, blockingHook(entered))
	h.run(t)
	<-entered
	h.tr.Kill("alloc stopped")
	<-h.tr.Done()
	s := h.tr.TaskState()
	types := eventTypes(s)
	if s.State != structs.TaskStateDead || s.Failed || s.Restarts != 0 || types[len(types)-1] != structs.TaskKilled {
		t.Fatalf("state %+v events %v", s, types)
	}
	if got := rec.sequence(); got != "prestart,stop" {
		t.Fatalf("hook calls %s, want prestart,stop", got)
	}
}

func TestShutdownDuringAPrestartHookRecordsNoRestart(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	h := newHarness(t, &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1s"}}, structs.JobTypeService, drv, clk)
	entered := make(chan struct{})
	rec := withRecorder(h, blockingHook(entered))
	go h.tr.Run()
	<-entered
	h.tr.Shutdown()
	<-h.tr.Done()
	s := h.tr.TaskState()
	want := []string{structs.TaskReceived, structs.TaskSetup}
	if s.State != structs.TaskStatePending || strings.Join(eventTypes(s), ",") != strings.Join(want, ",") {
		t.Fatalf("state %s events %v, want pending with %v", s.State, eventTypes(s), want)
	}
	// The task lives on for the next client: no stop hooks.
	if got := rec.sequence(); got != "prestart" {
		t.Fatalf("hook calls %s, want prestart", got)
	}
}

func TestReattachingSkipsPrestartAndTellsPoststart(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := rawexec.New(nil, clk, true)
	h := newHarness(t, rawTask("web", "sleep 1000"), structs.JobTypeService, drv, clk)
	go h.tr.Run()
	testutil.WaitFor(t, "task to run", h.running)
	h.tr.Shutdown()
	<-h.tr.Done()
	drv.Shutdown()

	drv2 := rawexec.New(nil, clk, true)
	defer drv2.Shutdown()
	cfg := h.cfg
	cfg.Driver, cfg.Restore = drv2, true
	tr2 := New(cfg)
	rec := &recordingHook{}
	tr2.hooks = append(tr2.hooks, rec)
	go tr2.Run()
	testutil.WaitFor(t, "poststart after re-attaching", func() bool { return rec.sequence() != "" })
	tr2.Kill("test over")
	<-tr2.Done()
	if got := rec.sequence(); got != "poststart,exited,stop" {
		t.Fatalf("hook calls %s, want poststart,exited,stop (no prestart for a re-attached process)", got)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !rec.posts[0].Reattached || rec.posts[0].Handle == nil {
		t.Fatalf("poststart request %+v", rec.posts[0])
	}
}
