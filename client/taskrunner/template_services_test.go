package taskrunner

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// fakeCatalog answers ForAlloc as the servers' blocking query does.
type fakeCatalog struct {
	mu      sync.Mutex
	index   uint64
	regs    []*structs.ServiceRegistration
	changed chan struct{}
	calls   int
}

func newFakeCatalog(regs ...*structs.ServiceRegistration) *fakeCatalog {
	return &fakeCatalog{index: 10, regs: regs, changed: make(chan struct{})}
}

func (f *fakeCatalog) ForAlloc(ctx context.Context, _ string, minIndex uint64) ([]*structs.ServiceRegistration, uint64, error) {
	for {
		f.mu.Lock()
		f.calls++
		if f.index > minIndex {
			out := append([]*structs.ServiceRegistration(nil), f.regs...)
			idx := f.index
			f.mu.Unlock()
			return out, idx, nil
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-ch:
		}
	}
}

func (f *fakeCatalog) set(regs ...*structs.ServiceRegistration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.index++
	f.regs = regs
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeCatalog) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func dbReg(id, addr string, port int) *structs.ServiceRegistration {
	return &structs.ServiceRegistration{ID: id, ServiceName: "db", Namespace: "default", AllocID: "a-" + id, Address: addr, Port: port}
}

// serviceHarness runs a long mock task whose one template lists the "db"
// service's instances, re-rendered by changeMode.
func serviceHarness(t *testing.T, cat *fakeCatalog, changeMode string) (*harness, string) {
	t.Helper()
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	t.Cleanup(drv.Shutdown)
	task := &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1h"},
		Templates: []*structs.Template{{DestPath: "local/db.conf", ChangeMode: changeMode,
			EmbeddedTmpl: `{{ range nomadService "db" }}{{ .Address }}:{{ .Port }};{{ end }}`}}}
	h := newHarness(t, task, structs.JobTypeService, drv, clk)
	h.cfg.Services = cat
	h.tr = New(h.cfg)
	h.run(t)
	return h, filepath.Join(h.dir.Task("t").Dir, "local/db.conf")
}

func fileIs(path, want string) func() bool {
	return func() bool {
		b, err := os.ReadFile(path)
		return err == nil && string(b) == want
	}
}

func TestServiceTemplateRestartsTheTaskWhenTheServiceMoves(t *testing.T) {
	cat := newFakeCatalog(dbReg("1", "10.0.0.5", 5432))
	h, rendered := serviceHarness(t, cat, structs.TemplateChangeModeRestart)
	testutil.WaitFor(t, "task to run", func() bool { return h.tr.TaskState().State == structs.TaskStateRunning })
	if !fileIs(rendered, "10.0.0.5:5432;")() {
		t.Fatal("the first render did not list the live instance")
	}
	cat.set(dbReg("1", "10.0.0.5", 5432), dbReg("2", "10.0.0.6", 5433))
	testutil.WaitFor(t, "the new instance rendered", fileIs(rendered, "10.0.0.5:5432;10.0.0.6:5433;"))
	testutil.WaitFor(t, "the task restarted and running", func() bool {
		s := h.tr.TaskState()
		return s.Restarts == 1 && s.State == structs.TaskStateRunning
	})
}

// waitForWatch waits until the watch has read the catalog again after
// a change, so it has acted on the previous one.
func waitForWatch(t *testing.T, cat *fakeCatalog, regs ...*structs.ServiceRegistration) {
	t.Helper()
	calls := cat.callCount()
	cat.set(regs...)
	testutil.WaitFor(t, "the watch to read again", func() bool { return cat.callCount() > calls+1 })
}

// A change that leaves the output as it was does nothing, even with
// change_mode restart.
func TestServiceTemplateIgnoresChangesOutsideItsOutput(t *testing.T) {
	cat := newFakeCatalog(dbReg("1", "10.0.0.5", 5432))
	h, rendered := serviceHarness(t, cat, structs.TemplateChangeModeRestart)
	testutil.WaitFor(t, "task to run", func() bool { return h.tr.TaskState().State == structs.TaskStateRunning })
	other := &structs.ServiceRegistration{ID: "9", ServiceName: "cache", Namespace: "default", AllocID: "a-9", Address: "10.0.0.9", Port: 6379}
	waitForWatch(t, cat, dbReg("1", "10.0.0.5", 5432), other)
	waitForWatch(t, cat, dbReg("1", "10.0.0.5", 5432), other)
	if s := h.tr.TaskState(); s.Restarts != 0 || !fileIs(rendered, "10.0.0.5:5432;")() {
		t.Fatalf("a change to another service restarted the task: %+v", s)
	}
}

// change_mode noop re-renders without touching the task.
func TestServiceTemplateNoopOnlyRenders(t *testing.T) {
	cat := newFakeCatalog(dbReg("1", "10.0.0.5", 5432))
	h, rendered := serviceHarness(t, cat, structs.TemplateChangeModeNoop)
	testutil.WaitFor(t, "task to run", func() bool { return h.tr.TaskState().State == structs.TaskStateRunning })
	cat.set(dbReg("1", "10.0.0.7", 5432))
	testutil.WaitFor(t, "the moved instance rendered", fileIs(rendered, "10.0.0.7:5432;"))
	waitForWatch(t, cat, dbReg("1", "10.0.0.7", 5432))
	if s := h.tr.TaskState(); s.Restarts != 0 || s.State != structs.TaskStateRunning {
		t.Fatalf("change_mode noop touched the task: %+v", s)
	}
}
