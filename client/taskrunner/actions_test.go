package taskrunner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/drivers/rawexec"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

func (h *harness) running() bool { return h.tr.TaskState().State == structs.TaskStateRunning }

// eventsAfter returns the types of the events from the first of type from.
func eventsAfter(s *structs.TaskState, from string) []string {
	types := eventTypes(s)
	for i, typ := range types {
		if typ == from {
			return types[i:]
		}
	}
	return nil
}

func TestUserRestartStartsTheTaskAgainOutsideTheRestartPolicy(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	// A policy of no restarts at all: were the user's restart counted
	// against it, the task would fail instead of starting again.
	h := newHarness(t, &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1h"}}, structs.JobTypeService, drv, clk)
	h.run(t)
	testutil.WaitFor(t, "task to run", h.running)

	for i := 1; i <= 2; i++ {
		if err := h.tr.Restart(context.Background()); err != nil {
			t.Fatalf("restart %d: %v", i, err)
		}
		testutil.WaitFor(t, "the task to start again", func() bool { return drv.Starts() == i+1 && h.running() })
	}
	s := h.tr.TaskState()
	if s.Failed || s.Restarts != 2 || s.LastRestart.IsZero() {
		t.Fatalf("state %+v", s)
	}
	want := []string{TaskRestartSignal, structs.TaskTerminated, structs.TaskRestarting, structs.TaskStarted}
	if got := eventsAfter(s, TaskRestartSignal); strings.Join(got[:4], ",") != strings.Join(want, ",") {
		t.Fatalf("events %v, want %v twice", got, want)
	}
	for _, e := range s.Events {
		if e.Type == structs.TaskRestarting && (e.RestartReason() != userRestartReason || e.StartDelay() != 0) {
			t.Fatalf("restarting event %+v", e)
		}
	}
	if stored, _ := h.db.GetTaskState(h.cfg.Alloc.ID, "t"); stored == nil || stored.Restarts != 2 {
		t.Fatalf("restarts not persisted: %+v", stored)
	}
}

func TestRestartAndSignalRefuseATaskWithoutAProcess(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	h := newHarness(t, &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1s"}}, structs.JobTypeBatch, drv, clk)
	gate := make(chan struct{})
	h.cfg.StartGate = gate
	h.tr = New(h.cfg)
	h.run(t)

	// Waiting for the servers' go-ahead: nothing to restart yet.
	testutil.WaitFor(t, "the runner to wait at the gate", func() bool { return len(h.tr.TaskState().Events) >= 2 })
	if err := h.tr.Restart(context.Background()); !errors.Is(err, ErrTaskNotRunning) || !strings.Contains(err.Error(), "pending") {
		t.Fatalf("restart of a pending task: %v", err)
	}
	if err := h.tr.Signal(context.Background(), "SIGHUP"); !errors.Is(err, ErrTaskNotRunning) {
		t.Fatalf("signal of a pending task: %v", err)
	}

	close(gate)
	testutil.WaitForWhile(t, "the task to finish", h.dead, func() { clk.Advance(time.Second) })
	if err := h.tr.Restart(context.Background()); !errors.Is(err, ErrTaskNotRunning) || !strings.Contains(err.Error(), "dead") {
		t.Fatalf("restart of a dead task: %v", err)
	}
	if drv.Starts() != 1 {
		t.Fatalf("started %d times", drv.Starts())
	}
}

func TestSignalOnADriverWithoutSignalsSaysSo(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	h := newHarness(t, &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1h"}}, structs.JobTypeService, drv, clk)
	h.run(t)
	testutil.WaitFor(t, "task to run", h.running)
	err := h.tr.Signal(context.Background(), "SIGHUP")
	if !errors.Is(err, drivers.ErrSignalsUnsupported) || !strings.Contains(err.Error(), "mock_driver") {
		t.Fatalf("got %v", err)
	}
	if !h.running() {
		t.Fatal("a refused signal stopped the task")
	}
}

// waitFile waits for a file a task writes and returns its content.
func waitFile(t *testing.T, path, want string) {
	t.Helper()
	testutil.WaitFor(t, "the task to write "+want+" to "+filepath.Base(path), func() bool {
		b, _ := os.ReadFile(path)
		return strings.Contains(string(b), want)
	})
}

func TestSignalReachesTheTaskWhichKeepsRunning(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := rawexec.New(nil, clk, true)
	defer drv.Shutdown()
	dir := t.TempDir()
	got := filepath.Join(dir, "got")
	// The shell sleeps in the foreground, briefly, so its trap runs at
	// most 0.2 s after the signal whenever it lands. (A long background
	// sleep and the wait builtin raced: a signal landing between the
	// fork and the wait left the trap waiting for the sleep.)
	task := rawTask("web", `trap 'echo usr1 >> `+got+`' USR1; echo ready >> `+got+`; while :; do sleep 0.2; done`)
	h := newHarness(t, task, structs.JobTypeService, drv, clk)
	h.run(t)
	waitFile(t, got, "ready")

	if err := h.tr.Signal(context.Background(), "SIGUSR1"); err != nil {
		t.Fatal(err)
	}
	waitFile(t, got, "usr1")
	if !h.running() {
		t.Fatalf("the task stopped: %+v", h.tr.TaskState())
	}
	last := h.tr.TaskState().Events[len(h.tr.TaskState().Events)-1]
	if last.Type != TaskSignaling || last.TaskSignal() != "SIGUSR1" {
		t.Fatalf("last event %+v", last)
	}
}

func TestUserRestartOfAProcessGivesANewProcess(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := rawexec.New(nil, clk, true)
	defer drv.Shutdown()
	pids := filepath.Join(t.TempDir(), "pids")
	h := newHarness(t, rawTask("web", `echo $$ >> `+pids+`; exec sleep 1000`), structs.JobTypeService, drv, clk)
	h.run(t)
	waitFile(t, pids, "\n")
	if err := h.tr.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "a second process", func() bool {
		b, _ := os.ReadFile(pids)
		lines := strings.Fields(string(b))
		return len(lines) == 2 && lines[0] != lines[1] && h.running()
	})
	// sleep dies of the default kill signal (SIGINT): a clean restart,
	// not a failure.
	if s := h.tr.TaskState(); s.Failed || s.Restarts != 1 {
		t.Fatalf("state %+v", s)
	}
}

func TestKillDuringAUserRestartLeavesTheTaskDead(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := rawexec.New(nil, clk, true)
	defer drv.Shutdown()
	ready := filepath.Join(t.TempDir(), "ready")
	// The task ignores SIGINT, so the restart waits out kill_timeout on
	// the fake clock; the kill arrives meanwhile.
	h := newHarness(t, rawTask("web", `trap "" INT; touch `+ready+`; sleep 1000`), structs.JobTypeService, drv, clk)
	h.run(t)
	testutil.WaitFor(t, "task to start", func() bool { _, err := os.Stat(ready); return err == nil })
	waiters := clk.Pending()
	restarted := make(chan error, 1)
	go func() { restarted <- h.tr.Restart(context.Background()) }()
	if !clk.WaitForTimers(waiters+1, 10*time.Second) {
		t.Fatal("the restart did not wait for the kill timeout")
	}
	h.tr.Kill("alloc stopped")
	clk.Advance(3 * time.Second)
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "task to be dead", h.dead)
	for _, e := range eventsAfter(h.tr.TaskState(), TaskRestartSignal) {
		if e == structs.TaskStarted {
			t.Fatal("a killed task was started again")
		}
	}
}
