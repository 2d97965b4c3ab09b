package taskrunner

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/client/template"
	"github.com/drover-sched/drover/helper/childproc"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// The attacks on the client through a job's templates: one that never
// ends and one that grows until the client runs out of memory. Each now
// fails the task's start naming the limit that stopped it, and the
// client's own process spends nothing on it.
const (
	spinningTemplate = `{{ range 1000000000000 }}{{ end }}`
	growingTemplate  = `{{ $x := "xxxxxxxxxxxxxxxx" }}{{ range $i := loop 31 }}{{ $x = print $x $x }}{{ end }}{{ len $x }}`
)

func TestATemplateThatSpinsFailsTheTaskAtTheTimeLimit(t *testing.T) {
	h := bombHarness(t, spinningTemplate, template.RendererConfig{Timeout: 2 * time.Second})
	start := time.Now()
	h.run(t)
	testutil.WaitFor(t, "task to fail", h.dead)
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("failing the task took %v", took)
	}
	hook := failedHook(t, h)
	if hook.Details["limit"] != "time" || hook.Details["template_index"] != "1" ||
		!strings.Contains(hook.DisplayMessage, "rendering took longer than 2s, the time limit for a task's templates") {
		t.Fatalf("event %+v", hook)
	}
}

func TestATemplateThatGrowsFailsTheTaskAtTheMemoryLimit(t *testing.T) {
	h := bombHarness(t, growingTemplate, template.RendererConfig{Memory: 64 << 20})
	before := totalAlloc()
	h.run(t)
	testutil.WaitFor(t, "task to fail", h.dead)
	hook := failedHook(t, h)
	if hook.Details["limit"] != "memory" || hook.Details["template_index"] != "1" ||
		!strings.Contains(hook.DisplayMessage, "rendering needed more than 64 MiB of memory, the limit for a task's templates") {
		t.Fatalf("event %+v", hook)
	}
	if grew := totalAlloc() - before; grew > 16<<20 {
		t.Fatalf("the client allocated %d MiB while the template grew", grew>>20)
	}
}

// Killing a task (its alloc or job was stopped) while its templates
// render kills the render at once, long before its time limit, so the
// task is dead and its alloc can free its resources.
func TestKillingATaskWhoseTemplateSpinsStopsTheRenderAtOnce(t *testing.T) {
	h := bombHarness(t, spinningTemplate, template.RendererConfig{Timeout: time.Minute})
	h.run(t)
	testutil.WaitFor(t, "the render to reach the spinning template", func() bool {
		_, err := os.Stat(filepath.Join(h.dir.Task("t").Dir, "local/first"))
		return err == nil && renderChildren(t) == 1
	})
	start := time.Now()
	h.tr.Kill("alloc stopped")
	testutil.WaitFor(t, "task to be dead", h.dead)
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("the killed task took %v to be dead", took)
	}
	if s := h.tr.TaskState(); s.Failed || eventTypes(s)[len(s.Events)-1] != structs.TaskKilled {
		t.Fatalf("state %+v events %v", s, eventTypes(s))
	}
	testutil.WaitFor(t, "the render child to be gone", func() bool { return renderChildren(t) == 0 })
}

// A client that shuts down while a template renders stops the render and
// leaves the task as it was, for the next client to start afresh.
func TestShutdownDuringARenderStopsItAndRecordsNoRestart(t *testing.T) {
	h := bombHarness(t, spinningTemplate, template.RendererConfig{Timeout: time.Minute})
	go h.tr.Run()
	testutil.WaitFor(t, "the render to reach the spinning template", func() bool { return renderChildren(t) == 1 })
	start := time.Now()
	h.tr.Shutdown()
	select {
	case <-h.tr.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after Shutdown")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("Run returned %v after Shutdown", took)
	}
	want := []string{structs.TaskReceived, structs.TaskSetup}
	if s := h.tr.TaskState(); s.State != structs.TaskStatePending || strings.Join(eventTypes(s), ",") != strings.Join(want, ",") {
		t.Fatalf("state %s, events %v, want pending with %v", s.State, eventTypes(s), want)
	}
	testutil.WaitFor(t, "the render child to be gone", func() bool { return renderChildren(t) == 0 })
}

// bombHarness is a task whose second template is data, rendered by a
// renderer with cfg's limits, that fails for good at its first failure.
func bombHarness(t *testing.T, data string, cfg template.RendererConfig) *harness {
	t.Helper()
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	t.Cleanup(drv.Shutdown)
	task := &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1s"},
		Templates: []*structs.Template{{EmbeddedTmpl: "ok", DestPath: "local/first"}, {EmbeddedTmpl: data, DestPath: "local/bomb"}}}
	h := newHarness(t, task, structs.JobTypeBatch, drv, clk)
	h.cfg.Templates = template.NewRenderer(cfg)
	h.tr = New(h.cfg)
	return h
}

// failedHook checks that the task failed at its template without ever
// starting, and returns the Task hook failed event.
func failedHook(t *testing.T, h *harness) *structs.TaskEvent {
	t.Helper()
	s := h.tr.TaskState()
	want := []string{structs.TaskReceived, structs.TaskSetup, structs.TaskHookFailed, structs.TaskNotRestarting}
	if got := eventTypes(s); !s.Failed || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("failed=%v events %v, want %v", s.Failed, got, want)
	}
	return s.Events[2]
}

// renderChildren counts this process's children that render templates.
func renderChildren(t *testing.T) int {
	return childproc.Running(os.Getpid(), template.RenderEntry)
}

func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}
