package taskrunner

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/drivers/rawexec"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// A check's restart goes through the restart policy: it is delayed and
// counted like a crash, and fails the task once the attempts are used up.
func TestRestartUnhealthyIsCountedByTheRestartPolicy(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	task := &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1h"},
		RestartPolicy: &structs.RestartPolicy{Attempts: 1, Interval: time.Hour, Delay: 5 * time.Second, Mode: structs.RestartPolicyModeFail}}
	h := newHarness(t, task, structs.JobTypeService, drv, clk)
	h.run(t)
	testutil.WaitFor(t, "task to run", h.running)

	const reason = `healthcheck: check "alive" unhealthy`
	if err := h.tr.RestartUnhealthy(context.Background(), reason); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the restart to be scheduled", func() bool { return h.tr.TaskState().Restarts == 1 })
	if drv.Starts() != 1 {
		t.Fatal("a check's restart must wait for the policy's delay")
	}
	testutil.WaitForWhile(t, "the task to start again", func() bool { return drv.Starts() == 2 && h.running() }, func() { clk.Advance(time.Second) })
	s := h.tr.TaskState()
	want := []string{TaskRestartSignal, structs.TaskTerminated, structs.TaskRestarting, structs.TaskStarted}
	if got := eventsAfter(s, TaskRestartSignal); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("events %v, want %v", got, want)
	}
	for _, e := range s.Events {
		if e.Type == TaskRestartSignal && e.RestartReason() != reason {
			t.Fatalf("restart signaled event %+v", e)
		}
		if e.Type == structs.TaskRestarting && e.StartDelay() == 0 {
			t.Fatalf("restarting event without the policy's delay: %+v", e)
		}
	}

	// The one attempt is used: the next check restart fails the task.
	if err := h.tr.RestartUnhealthy(context.Background(), reason); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the task to fail", func() bool { return h.tr.TaskState().State == structs.TaskStateDead })
	if s := h.tr.TaskState(); !s.Failed {
		t.Fatalf("state %+v: want failed once the restart policy is exhausted", s)
	}
	if err := h.tr.RestartUnhealthy(context.Background(), reason); !errors.Is(err, ErrTaskNotRunning) {
		t.Fatalf("restart of a dead task: %v", err)
	}
}

func TestExecRunsInTheRunningTask(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := rawexec.New(nil, clk, true)
	defer drv.Shutdown()
	h := newHarness(t, rawTask("web", "sleep 1000"), structs.JobTypeService, drv, clk)
	h.run(t)
	testutil.WaitFor(t, "task to run", h.running)
	var out bytes.Buffer
	code, err := h.tr.Exec(context.Background(), "/bin/sh", []string{"-c", `echo "$NOMAD_TASK_NAME in $(basename $PWD)"; exit 2`}, &out)
	if err != nil || code != 2 || out.String() != "web in web\n" {
		t.Fatalf("exit %d, err %v, output %q", code, err, out.String())
	}

	mockDrv := mock.New("", clk)
	defer mockDrv.Shutdown()
	m := newHarness(t, &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1h"}}, structs.JobTypeService, mockDrv, clk)
	if _, err := m.tr.Exec(context.Background(), "/bin/true", nil, &out); !errors.Is(err, ErrExecUnsupported) {
		t.Fatalf("exec on the mock driver: %v", err)
	}
}
