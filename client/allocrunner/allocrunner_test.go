package allocrunner

import (
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/client/state"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

type recorder struct {
	mu      sync.Mutex
	updates []*structs.Allocation
}

func (r *recorder) add(a *structs.Allocation) {
	r.mu.Lock()
	r.updates = append(r.updates, a)
	r.mu.Unlock()
}

func (r *recorder) last() *structs.Allocation {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.updates) == 0 {
		return &structs.Allocation{}
	}
	return r.updates[len(r.updates)-1]
}

func (r *recorder) statuses() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, u := range r.updates {
		if len(out) == 0 || out[len(out)-1] != u.ClientStatus {
			out = append(out, u.ClientStatus)
		}
	}
	return out
}

func mockAlloc(jobType string, tasks ...*structs.Task) *structs.Allocation {
	for _, t := range tasks {
		t.Driver = "mock"
		if t.RestartPolicy == nil {
			t.RestartPolicy = &structs.RestartPolicy{Mode: structs.RestartPolicyModeFail, Interval: time.Hour}
		}
	}
	job := &structs.Job{ID: "job", Name: "job", Type: jobType, TaskGroups: []*structs.TaskGroup{{Name: "g", Tasks: tasks}}}
	return &structs.Allocation{ID: structs.GenerateUUID(), Name: "job.g[0]", JobID: "job", Job: job, TaskGroup: "g",
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending, AllocModifyIndex: 10}
}

func newRunner(t *testing.T, alloc *structs.Allocation, drv drivers.Driver, clk clock.Clock, db state.DB, base string, restore bool) (*AllocRunner, *recorder) {
	rec := &recorder{}
	ar := New(Config{Alloc: alloc, Node: &structs.Node{ID: "n1"}, AllocDirBase: base, StateDB: db, Clock: clk,
		Driver:   func(name string) drivers.Driver { return drv },
		OnUpdate: rec.add, Restore: restore})
	return ar, rec
}

func TestFailedTaskStopsSiblingsAndFailsAlloc(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	alloc := mockAlloc(structs.JobTypeService,
		&structs.Task{Name: "web", Config: map[string]any{}},
		&structs.Task{Name: "bad", Config: map[string]any{"run_for": "2s", "exit_code": 1}})
	ar, rec := newRunner(t, alloc, drv, clk, state.NewMemDB(), t.TempDir(), false)
	go ar.Run()
	// "bad" cannot exit before the clock moves, so the alloc is reported
	// running first (reports of quick changes may be coalesced).
	testutil.WaitFor(t, "running", func() bool { return rec.last().ClientStatus == structs.AllocClientStatusRunning })
	testutil.WaitForWhile(t, "alloc to finish", ar.IsTerminal, func() { clk.Advance(time.Second) })
	last := rec.last()
	if last.ClientStatus != structs.AllocClientStatusFailed {
		t.Fatalf("status %s", last.ClientStatus)
	}
	if s := last.TaskStates["web"]; s.State != structs.TaskStateDead || s.Failed {
		t.Fatalf("sibling %+v", s)
	}
	if got := rec.statuses(); got[len(got)-2] != structs.AllocClientStatusRunning {
		t.Fatalf("statuses %v", got)
	}
}

func TestDesiredStopStopsTasksAndCompletes(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	alloc := mockAlloc(structs.JobTypeService, &structs.Task{Name: "web", Config: map[string]any{}})
	ar, rec := newRunner(t, alloc, drv, clk, state.NewMemDB(), t.TempDir(), false)
	go ar.Run()
	testutil.WaitFor(t, "running", func() bool { return rec.last().ClientStatus == structs.AllocClientStatusRunning })

	stale := alloc.Copy()
	stale.AllocModifyIndex = 5
	stale.DesiredStatus = structs.AllocDesiredStatusStop
	ar.Update(stale)
	if rec.last().ClientStatus != structs.AllocClientStatusRunning {
		t.Fatal("an older alloc version must be ignored")
	}

	stop := alloc.Copy()
	stop.AllocModifyIndex = 20
	stop.DesiredStatus = structs.AllocDesiredStatusStop
	ar.Update(stop)
	testutil.WaitForWhile(t, "stopped", ar.IsTerminal, func() { clk.Advance(time.Second) })
	if got := rec.last().ClientStatus; got != structs.AllocClientStatusComplete {
		t.Fatalf("status %s", got)
	}
	if err := ar.Destroy(); err != nil || ar.AllocDir().Exists() {
		t.Fatalf("destroy: %v", err)
	}
}

func TestRestoredRunnerWaitsForServerBeforeRestarting(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	db := state.NewMemDB()
	base := t.TempDir()
	drv := mock.New("", clk)
	alloc := mockAlloc(structs.JobTypeService, &structs.Task{Name: "web", Config: map[string]any{"run_for": "1h"},
		RestartPolicy: &structs.RestartPolicy{Attempts: 3, Interval: time.Hour, Mode: structs.RestartPolicyModeFail}})
	ar, rec := newRunner(t, alloc, drv, clk, db, base, false)
	go ar.Run()
	testutil.WaitFor(t, "running", func() bool { return rec.last().ClientStatus == structs.AllocClientStatusRunning })
	ar.Shutdown()
	drv.Shutdown()

	// The client is down for two hours: the task's run_for passes.
	clk.Advance(2 * time.Hour)
	drv2 := mock.New("", clk)
	defer drv2.Shutdown()
	stored, _ := db.GetAllocs()
	ar2, rec2 := newRunner(t, stored[0], drv2, clk, db, base, true)
	go ar2.Run()
	testutil.WaitFor(t, "the dead task to be noticed", func() bool {
		s := ar2.TaskState("web")
		return s != nil && s.Restarts == 1
	})
	// Restart delay passes; the gate is still shut.
	clk.Advance(time.Minute)
	if drv2.Starts() != 0 {
		t.Fatal("a restored task was restarted before the servers confirmed the alloc")
	}
	stop := stored[0].Copy()
	stop.AllocModifyIndex = 30
	stop.DesiredStatus = structs.AllocDesiredStatusStop
	ar2.Update(stop)
	testutil.WaitFor(t, "stopped", ar2.IsTerminal)
	if drv2.Starts() != 0 {
		t.Fatal("a task whose alloc the servers stopped was restarted")
	}
	if got := rec2.last().ClientStatus; got != structs.AllocClientStatusComplete {
		t.Fatalf("status %s", got)
	}
}

func TestConfirmedRestoredRunnerRestartsDeadTask(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	db := state.NewMemDB()
	base := t.TempDir()
	drv := mock.New("", clk)
	alloc := mockAlloc(structs.JobTypeService, &structs.Task{Name: "web", Config: map[string]any{"run_for": "1h"},
		RestartPolicy: &structs.RestartPolicy{Attempts: 3, Interval: time.Hour, Mode: structs.RestartPolicyModeFail}})
	ar, rec := newRunner(t, alloc, drv, clk, db, base, false)
	go ar.Run()
	testutil.WaitFor(t, "running", func() bool { return rec.last().ClientStatus == structs.AllocClientStatusRunning })
	ar.Shutdown()
	drv.Shutdown()
	clk.Advance(2 * time.Hour)

	drv2 := mock.New("", clk)
	defer drv2.Shutdown()
	stored, _ := db.GetAllocs()
	ar2, _ := newRunner(t, stored[0], drv2, clk, db, base, true)
	go ar2.Run()
	ar2.Confirm()
	testutil.WaitForWhile(t, "the restart", func() bool { return drv2.Starts() == 1 }, func() { clk.Advance(time.Second) })
	ar2.Kill("done")
	<-ar2.Done()
}

func deploymentAlloc(task *structs.Task) *structs.Allocation {
	a := mockAlloc(structs.JobTypeService, task)
	a.DeploymentID = "d1"
	a.Job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, HealthCheck: structs.UpdateHealthCheckChecks,
		MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute}
	return a
}

func TestDeploymentHealthReportedAfterMinHealthyTime(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	ar, rec := newRunner(t, deploymentAlloc(&structs.Task{Name: "web", Config: map[string]any{}}), drv, clk, state.NewMemDB(), t.TempDir(), false)
	go ar.Run()
	defer func() { ar.Kill("done"); <-ar.Done() }()
	testutil.WaitFor(t, "running", func() bool { return rec.last().ClientStatus == structs.AllocClientStatusRunning })
	clk.Advance(9 * time.Second)
	if rec.last().DeploymentStatus != nil {
		t.Fatal("healthy before min_healthy_time")
	}
	testutil.WaitForWhile(t, "health", func() bool { return rec.last().DeploymentStatus != nil }, func() { clk.Advance(time.Second) })
	ds := rec.last().DeploymentStatus
	if ds.Healthy == nil || !*ds.Healthy || ds.Timestamp.IsZero() {
		t.Fatalf("deployment status %+v", ds)
	}
}

func TestDeploymentUnhealthyWhenTaskRestarts(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	task := &structs.Task{Name: "web", Config: map[string]any{"run_for": "2s", "exit_code": 1},
		RestartPolicy: &structs.RestartPolicy{Attempts: 5, Interval: time.Hour, Delay: time.Second, Mode: structs.RestartPolicyModeFail}}
	ar, rec := newRunner(t, deploymentAlloc(task), drv, clk, state.NewMemDB(), t.TempDir(), false)
	go ar.Run()
	defer func() { ar.Kill("done"); <-ar.Done() }()
	testutil.WaitForWhile(t, "health verdict", func() bool { return rec.last().DeploymentStatus != nil }, func() { clk.Advance(time.Second) })
	if ds := rec.last().DeploymentStatus; *ds.Healthy {
		t.Fatal("a restarting task must make the alloc unhealthy")
	}
}

// Alloc shows the client's health with the servers' Canary flag: a
// promotion, which clears the flag after the verdict, shows at once (the
// client's services switch from canary_tags to tags by it).
func TestAllocShowsTheServersCanaryFlagWithTheClientsHealth(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	a := deploymentAlloc(&structs.Task{Name: "web", Config: map[string]any{}})
	a.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
	a.AllocModifyIndex = 10
	ar, rec := newRunner(t, a, drv, clk, state.NewMemDB(), t.TempDir(), false)
	go ar.Run()
	defer func() { ar.Kill("done"); <-ar.Done() }()
	testutil.WaitForWhile(t, "health", func() bool { return rec.last().DeploymentStatus != nil }, func() { clk.Advance(time.Second) })
	if ds := ar.Alloc().DeploymentStatus; ds == nil || !ds.Canary || ds.Healthy == nil || !*ds.Healthy {
		t.Fatalf("before the promotion: %+v, want a healthy canary", ds)
	}
	promoted := a.Copy()
	promoted.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: false, Healthy: ar.Alloc().DeploymentStatus.Healthy}
	promoted.AllocModifyIndex = 20
	ar.Update(promoted)
	if ds := ar.Alloc().DeploymentStatus; ds == nil || ds.Canary || ds.Healthy == nil || !*ds.Healthy {
		t.Fatalf("after the promotion: %+v, want healthy and no longer a canary", ds)
	}
}
