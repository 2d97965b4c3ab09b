package taskrunner

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/telemetry/telemetrytest"
	"github.com/drover-sched/drover/structs"
)

// Every start, restart and end of a task is counted under Nomad's names,
// with the task's labels.
func TestMetricsCountTaskStartsRestartsAndEnds(t *testing.T) {
	for _, tc := range []struct {
		name                               string
		exitCode, attempts                 int
		starts, restarts, failed, complete int
	}{
		{"a task that exits zero completes", 0, 0, 1, 0, 0, 1},
		{"a failing task restarts twice, then fails", 1, 2, 3, 2, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, sink := telemetrytest.New()
			clk := clock.NewFake(time.Time{})
			drv := mock.New("", clk)
			defer drv.Shutdown()
			task := &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1s", "exit_code": tc.exitCode},
				RestartPolicy: &structs.RestartPolicy{Attempts: tc.attempts, Interval: 10 * time.Minute, Delay: 5 * time.Second, Mode: structs.RestartPolicyModeFail}}
			h := newHarness(t, task, structs.JobTypeBatch, drv, clk)
			h.cfg.Metrics = m
			h.tr = New(h.cfg)
			h.run(t)
			testutil.WaitForWhile(t, "task to end", h.dead, func() { clk.Advance(time.Second) })

			labels := []string{"job", "job", "task_group", "g", "task", "t", "alloc_id", h.cfg.Alloc.ID, "namespace", "default"}
			for key, want := range map[string]int{
				"nomad.client.allocs.running":  tc.starts,
				"nomad.client.allocs.restart":  tc.restarts,
				"nomad.client.allocs.failed":   tc.failed,
				"nomad.client.allocs.complete": tc.complete,
			} {
				if got, _ := sink.Counter(key, labels...); got != want {
					t.Errorf("%s = %d, want %d", key, got, want)
				}
			}
		})
	}
}
