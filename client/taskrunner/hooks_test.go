package taskrunner

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/drivers/rawexec"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// recordingHook implements every stage and records each call with its
// request, so a test can check when the runner calls what. prestart, if
// set, does the prestart's work.
type recordingHook struct {
	prestart func(ctx context.Context, req *PrestartRequest) error

	mu    sync.Mutex
	calls []hookCall
}

type hookCall struct {
	stage string
	req   any
}

func (*recordingHook) Name() string { return "recorder" }

func (r *recordingHook) record(stage string, req any) {
	r.mu.Lock()
	r.calls = append(r.calls, hookCall{stage, req})
	r.mu.Unlock()
}

func (r *recordingHook) Prestart(ctx context.Context, req *PrestartRequest, _ *PrestartResponse) error {
	r.record("prestart", req)
	if r.prestart != nil {
		return r.prestart(ctx, req)
	}
	return nil
}

func (r *recordingHook) Poststart(_ context.Context, req *PoststartRequest) error {
	r.record("poststart", req)
	return nil
}

func (r *recordingHook) Exited(_ context.Context, req *ExitedRequest) error {
	r.record("exited", req)
	return nil
}

func (r *recordingHook) Stop(_ context.Context, req *StopRequest) error {
	r.record("stop", req)
	return errors.New("a stop hook's error is only logged")
}

func (r *recordingHook) Update(_ context.Context, req *UpdateRequest) error {
	r.record("update", req)
	return nil
}

// sequence is the stages called so far, comma-separated.
func (r *recordingHook) sequence() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.calls {
		out = append(out, c.stage)
	}
	return strings.Join(out, ",")
}

// first returns the request of the first call of stage.
func first[T any](r *recordingHook, stage string) T {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.calls {
		if c.stage == stage {
			return c.req.(T)
		}
	}
	var zero T
	return zero
}

// withRecorder adds a recording hook after the task's own hooks.
func withRecorder(h *harness, r *recordingHook) *recordingHook {
	h.tr.hooks = append(h.tr.hooks, r)
	return r
}

// mockHarness runs task on the mock driver with a fake clock.
func mockHarness(t *testing.T, task *structs.Task, jobType string) (*harness, *clock.Fake, *mock.Driver) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	t.Cleanup(drv.Shutdown)
	return newHarness(t, task, jobType, drv, clk), clk, drv
}

func TestHooksAreCalledAtEachStageOfATasksLife(t *testing.T) {
	task := &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1s", "exit_code": 3},
		RestartPolicy: &structs.RestartPolicy{Attempts: 1, Interval: 10 * time.Minute, Delay: time.Second, Mode: structs.RestartPolicyModeFail}}
	h, clk, _ := mockHarness(t, task, structs.JobTypeService)
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
	if first[*UpdateRequest](rec, "update").Alloc != newer {
		t.Fatal("the update hook was not given the newer alloc")
	}
	req := first[*PrestartRequest](rec, "prestart")
	if req.Alloc != newer || req.Task.Name != "t" || req.TaskDir.Dir != h.dir.Task("t").Dir || req.AllocDir != h.dir {
		t.Fatalf("prestart request %+v", req)
	}
	// The hooks before it built the environment.
	if req.Env == nil || req.Env.Map()["NOMAD_ALLOC_ID"] != newer.ID {
		t.Fatalf("a later prestart hook did not get the environment the env hook built")
	}
	if p := first[*PoststartRequest](rec, "poststart"); p.Handle == nil || p.Reattached || p.Alloc != newer {
		t.Fatalf("poststart request %+v", p)
	}
	if e := first[*ExitedRequest](rec, "exited"); e.Result == nil || e.Result.ExitCode != 3 {
		t.Fatalf("exited request %+v", e)
	}
}

func TestAFailingPrestartHookFailsTheStartUnderTheRestartPolicy(t *testing.T) {
	task := &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1s"},
		RestartPolicy: &structs.RestartPolicy{Attempts: 2, Interval: 10 * time.Minute, Delay: time.Second, Mode: structs.RestartPolicyModeFail}}
	h, clk, drv := mockHarness(t, task, structs.JobTypeBatch)
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
	h, _, _ := mockHarness(t, &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1s"}}, structs.JobTypeService)
	entered := make(chan struct{})
	rec := withRecorder(h, blockingHook(entered))
	h.run(t)
	testutil.WaitFor(t, "the prestart hook to run", func() bool { return closed(entered) })
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
	h, _, _ := mockHarness(t, &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1s"}}, structs.JobTypeService)
	entered := make(chan struct{})
	rec := withRecorder(h, blockingHook(entered))
	go h.tr.Run()
	testutil.WaitFor(t, "the prestart hook to run", func() bool { return closed(entered) })
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
	h := newHarness(t, rawTask("web", "exec sleep 1000"), structs.JobTypeService, drv, clk)
	go h.tr.Run()
	// The kill comes moments after the start, so wait until the shell has
	// become sleep: a shell still starting up (dash here) catches an early
	// SIGINT itself and then starts its command anyway, which never sees
	// the signal.
	testutil.WaitFor(t, "the task's shell to exec sleep", func() bool {
		handle, _ := h.db.GetTaskHandle(h.cfg.Alloc.ID, "web")
		if handle == nil {
			return false
		}
		st, err := drv.InspectTask(handle.TaskID)
		if err != nil {
			return false
		}
		comm, _ := os.ReadFile("/proc/" + strconv.Itoa(st.Pid) + "/comm")
		return string(comm) == "sleep\n"
	})
	cfg := clientRestart(t, h, drv)
	tr2 := New(cfg)
	rec := &recordingHook{}
	tr2.hooks = append(tr2.hooks, rec)
	go tr2.Run()
	testutil.WaitFor(t, "poststart after re-attaching", func() bool { return rec.sequence() != "" })
	tr2.Kill("test over")
	// The fake clock stands still, so kill_timeout never passes: only the
	// kill signal can end the task.
	testutil.WaitFor(t, "the re-attached task to die of its kill signal", func() bool { return closed(tr2.Done()) })
	if got := rec.sequence(); got != "poststart,exited,stop" {
		t.Fatalf("hook calls %s, want poststart,exited,stop (no prestart for a re-attached process)", got)
	}
	if p := first[*PoststartRequest](rec, "poststart"); !p.Reattached || p.Handle == nil {
		t.Fatalf("poststart request %+v", p)
	}
}
