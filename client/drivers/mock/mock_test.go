package mock

import (
	"context"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/helper/clock"
)

func cfg(id string, c map[string]any) *drivers.TaskConfig {
	return &drivers.TaskConfig{ID: id, TaskName: "t", Config: c}
}

func result(t *testing.T, d *Driver, id string) *drivers.ExitResult {
	t.Helper()
	ch, err := d.WaitTask(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no exit")
		return nil
	}
}

func TestMockRunsForItsDurationOnTheClock(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	d := New("", clk)
	defer d.Shutdown()
	if _, err := d.StartTask(cfg("a", map[string]any{"run_for": "10s", "exit_code": 2})); err != nil {
		t.Fatal(err)
	}
	clk.WaitForTimers(1, 5*time.Second)
	clk.Advance(9 * time.Second)
	if st, _ := d.InspectTask("a"); st.State != drivers.TaskStateRunning {
		t.Fatal("exited early")
	}
	clk.Advance(time.Second)
	if r := result(t, d, "a"); r.ExitCode != 2 {
		t.Fatalf("exit %+v", r)
	}
}

func TestMockStartErrors(t *testing.T) {
	d := New("", nil)
	_, err := d.StartTask(cfg("a", map[string]any{"start_error": "boom", "start_error_recoverable": true}))
	if err == nil || !drivers.IsRecoverable(err) {
		t.Fatalf("want a recoverable error, got %v", err)
	}
	_, err = d.StartTask(cfg("b", map[string]any{"start_error": "boom"}))
	if err == nil || drivers.IsRecoverable(err) {
		t.Fatalf("want a fatal error, got %v", err)
	}
}

func TestMockKillAfterLongerThanTimeoutIsForced(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	d := New("", clk)
	defer d.Shutdown()
	if _, err := d.StartTask(cfg("a", map[string]any{"kill_after": "1m"})); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = d.StopTask("a", 5*time.Second, ""); close(done) }()
	clk.WaitForTimers(2, 5*time.Second) // StopTask's timeout and the task's kill_after
	clk.Advance(5 * time.Second)
	<-done
	if r := result(t, d, "a"); r.Signal != 9 {
		t.Fatalf("want a forced kill, got %+v", r)
	}
}
