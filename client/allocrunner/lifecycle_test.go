package allocrunner

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/client/state"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

func lifecycleTask(name, hook string, sidecar bool, cfg map[string]any) *structs.Task {
	t := &structs.Task{Name: name, Config: cfg}
	if hook != "" {
		t.Lifecycle = &structs.TaskLifecycleConfig{Hook: hook, Sidecar: sidecar}
	}
	return t
}

// taskState reads one task's state from the runner.
func taskState(ar *AllocRunner, name string) *structs.TaskState { return ar.TaskState(name) }

func isState(ar *AllocRunner, name, state string) func() bool {
	return func() bool {
		s := taskState(ar, name)
		return s != nil && s.State == state
	}
}

// A service alloc with every kind of lifecycle task runs them in order:
// the init task to completion (and not again, although service tasks are
// restarted when they exit), the sidecar alongside the main task, the
// poststart task once the main task has started, and the poststop task
// only after everything else has been stopped.
func TestLifecycleOrdersTasksInAServiceAlloc(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	clk := clock.NewFake(t0)
	drv := mock.New("", clk)
	defer drv.Shutdown()
	alloc := mockAlloc(structs.JobTypeService,
		lifecycleTask("web", "", false, map[string]any{}),
		lifecycleTask("init", structs.TaskLifecycleHookPrestart, false, map[string]any{"run_for": "2s"}),
		lifecycleTask("proxy", structs.TaskLifecycleHookPrestart, true, map[string]any{}),
		lifecycleTask("announce", structs.TaskLifecycleHookPoststart, false, map[string]any{"run_for": "1s"}),
		lifecycleTask("cleanup", structs.TaskLifecycleHookPoststop, false, map[string]any{"run_for": "1s"}),
	)
	ar, rec := newRunner(t, alloc, drv, clk, state.NewMemDB(), t.TempDir(), false)
	go ar.Run()

	testutil.WaitFor(t, "init and proxy running", func() bool {
		return isState(ar, "init", structs.TaskStateRunning)() && isState(ar, "proxy", structs.TaskStateRunning)()
	})
	testutil.WaitForWhile(t, "web running", isState(ar, "web", structs.TaskStateRunning), func() { clk.Advance(500 * time.Millisecond) })
	initState, web := taskState(ar, "init"), taskState(ar, "web")
	if initState.State != structs.TaskStateDead || initState.Failed || initState.Restarts != 0 {
		t.Fatalf("init: %+v", initState)
	}
	if web.StartedAt.Before(initState.FinishedAt) {
		t.Fatalf("web started at %v, before init finished at %v", web.StartedAt, initState.FinishedAt)
	}
	testutil.WaitForWhile(t, "announce done", isState(ar, "announce", structs.TaskStateDead), func() { clk.Advance(500 * time.Millisecond) })
	announce := taskState(ar, "announce")
	if announce.Failed || announce.Restarts != 0 || announce.StartedAt.Before(web.StartedAt) {
		t.Fatalf("announce: %+v (web started %v)", announce, web.StartedAt)
	}
	if s := taskState(ar, "cleanup"); s.State != structs.TaskStatePending || hasStarted(s) {
		t.Fatalf("cleanup ran before the alloc stopped: %+v", s)
	}
	if got := rec.last().ClientStatus; got != structs.AllocClientStatusRunning {
		t.Fatalf("alloc %s while web and proxy run", got)
	}

	stop := alloc.Copy()
	stop.AllocModifyIndex = 20
	stop.DesiredStatus = structs.AllocDesiredStatusStop
	ar.Update(stop)
	testutil.WaitForWhile(t, "stopped", ar.IsTerminal, func() { clk.Advance(500 * time.Millisecond) })
	web, cleanup := taskState(ar, "web"), taskState(ar, "cleanup")
	proxy := taskState(ar, "proxy")
	if !hasStarted(cleanup) || cleanup.Failed || cleanup.StartedAt.Before(web.FinishedAt) || cleanup.StartedAt.Before(proxy.FinishedAt) {
		t.Fatalf("cleanup %+v; web finished %v, proxy %v", cleanup, web.FinishedAt, proxy.FinishedAt)
	}
	if got := rec.last().ClientStatus; got != structs.AllocClientStatusComplete {
		t.Fatalf("alloc %s after stop", got)
	}
}

// In a batch alloc the sidecar is stopped once the main task completes,
// then the poststop task runs, and the alloc is complete.
func TestLifecycleStopsSidecarsWhenMainTasksComplete(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	drv := mock.New("", clk)
	defer drv.Shutdown()
	alloc := mockAlloc(structs.JobTypeBatch,
		lifecycleTask("work", "", false, map[string]any{"run_for": "3s"}),
		lifecycleTask("proxy", structs.TaskLifecycleHookPrestart, true, map[string]any{}),
		lifecycleTask("logs", structs.TaskLifecycleHookPoststart, true, map[string]any{}),
		lifecycleTask("report", structs.TaskLifecycleHookPoststop, false, map[string]any{"run_for": "1s"}),
	)
	ar, rec := newRunner(t, alloc, drv, clk, state.NewMemDB(), t.TempDir(), false)
	go ar.Run()
	testutil.WaitForWhile(t, "alloc done", ar.IsTerminal, func() { clk.Advance(500 * time.Millisecond) })
	last := rec.last()
	if last.ClientStatus != structs.AllocClientStatusComplete {
		t.Fatalf("alloc %s: %+v", last.ClientStatus, last.TaskStates)
	}
	work, report := last.TaskStates["work"], last.TaskStates["report"]
	for _, name := range []string{"proxy", "logs"} {
		s := last.TaskStates[name]
		if s.State != structs.TaskStateDead || s.Failed || s.FinishedAt.Before(work.FinishedAt) {
			t.Fatalf("sidecar %s: %+v (work finished %v)", name, s, work.FinishedAt)
		}
	}
	if report.Failed || !hasStarted(report) || report.StartedAt.Before(work.FinishedAt) {
		t.Fatalf("report %+v", report)
	}
}

// An init task that fails fails the alloc: the main task never starts, and
// the poststop task still runs as cleanup.
func TestLifecycleFailedPrestartFailsTheAlloc(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	drv := mock.New("", clk)
	defer drv.Shutdown()
	alloc := mockAlloc(structs.JobTypeService,
		lifecycleTask("web", "", false, map[string]any{}),
		lifecycleTask("init", structs.TaskLifecycleHookPrestart, false, map[string]any{"run_for": "1s", "exit_code": 3}),
		lifecycleTask("cleanup", structs.TaskLifecycleHookPoststop, false, map[string]any{"run_for": "1s"}),
	)
	ar, rec := newRunner(t, alloc, drv, clk, state.NewMemDB(), t.TempDir(), false)
	go ar.Run()
	testutil.WaitForWhile(t, "alloc done", ar.IsTerminal, func() { clk.Advance(500 * time.Millisecond) })
	last := rec.last()
	if last.ClientStatus != structs.AllocClientStatusFailed {
		t.Fatalf("alloc %s", last.ClientStatus)
	}
	if s := last.TaskStates["web"]; hasStarted(s) || s.State != structs.TaskStateDead {
		t.Fatalf("web started after init failed: %+v", s)
	}
	if s := last.TaskStates["init"]; !s.Failed {
		t.Fatalf("init %+v", s)
	}
	if s := last.TaskStates["cleanup"]; !hasStarted(s) || s.Failed {
		t.Fatalf("cleanup did not run: %+v", s)
	}
}

// A restored alloc the servers no longer want never ran its tasks again,
// so its poststop task is not run either.
func TestLifecycleKillBeforeStartSkipsPoststop(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	drv := mock.New("", clk)
	defer drv.Shutdown()
	alloc := mockAlloc(structs.JobTypeService,
		lifecycleTask("web", "", false, map[string]any{}),
		lifecycleTask("cleanup", structs.TaskLifecycleHookPoststop, false, map[string]any{"run_for": "1s"}),
	)
	ar, _ := newRunner(t, alloc, drv, clk, state.NewMemDB(), t.TempDir(), true)
	go ar.Run()
	ar.Kill("alloc desired status is stop")
	testutil.WaitForWhile(t, "alloc done", func() bool {
		select {
		case <-ar.Done():
			return true
		default:
			return false
		}
	}, func() { clk.Advance(500 * time.Millisecond) })
	for _, name := range []string{"web", "cleanup"} {
		if s := taskState(ar, name); hasStarted(s) {
			t.Fatalf("%s ran: %+v", name, s)
		}
	}
}

// A sidecar is restarted when it exits, even successfully and in a batch
// job, as Nomad does: a prestart sidecar that exits before the init task
// finishes is running again when the main task's turn comes, so the main
// task is not held back for good.
func TestLifecycleRestartsASidecarThatExitsInABatchAlloc(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	drv := mock.New("", clk)
	defer drv.Shutdown()
	logger := lifecycleTask("logger", structs.TaskLifecycleHookPrestart, true, map[string]any{"run_for": "1s"})
	alloc := mockAlloc(structs.JobTypeBatch,
		lifecycleTask("work", "", false, map[string]any{"run_for": "1s"}),
		lifecycleTask("init", structs.TaskLifecycleHookPrestart, false, map[string]any{"run_for": "30s"}),
		logger,
	)
	logger.RestartPolicy = &structs.RestartPolicy{Attempts: 100, Interval: time.Hour, Delay: time.Second, Mode: structs.RestartPolicyModeFail}
	ar, rec := newRunner(t, alloc, drv, clk, state.NewMemDB(), t.TempDir(), false)
	go ar.Run()
	testutil.WaitForWhile(t, "alloc done", ar.IsTerminal, func() { clk.Advance(500 * time.Millisecond) })
	last := rec.last()
	if last.ClientStatus != structs.AllocClientStatusComplete {
		t.Fatalf("alloc %s: %+v", last.ClientStatus, last.TaskStates)
	}
	if s := last.TaskStates["logger"]; s.Failed {
		t.Fatalf("logger %+v", s)
	}
	work, init := last.TaskStates["work"], last.TaskStates["init"]
	if !hasStarted(work) || work.Failed || work.StartedAt.Before(init.FinishedAt) {
		t.Fatalf("work %+v; init finished %v", work, init.FinishedAt)
	}
}

// killingAt returns the time of the task's first Killing event.
func killingAt(s *structs.TaskState) (time.Time, bool) {
	for _, e := range s.Events {
		if e.Type == structs.TaskKilling {
			return time.Unix(0, e.Time), true
		}
	}
	return time.Time{}, false
}

// Stopping an alloc stops its sidecars last, as Nomad orders it: a proxy
// or log shipper keeps serving the main task while that task shuts down,
// and is stopped only once the main task is dead.
func TestLifecycleStopsSidecarsAfterTheMainTasks(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	drv := mock.New("", clk)
	defer drv.Shutdown()
	web := lifecycleTask("web", "", false, map[string]any{"kill_after": "30s"})
	web.KillTimeout = time.Minute
	alloc := mockAlloc(structs.JobTypeService,
		web,
		lifecycleTask("proxy", structs.TaskLifecycleHookPrestart, true, map[string]any{}),
		lifecycleTask("cleanup", structs.TaskLifecycleHookPoststop, false, map[string]any{"run_for": "1s"}),
	)
	ar, rec := newRunner(t, alloc, drv, clk, state.NewMemDB(), t.TempDir(), false)
	go ar.Run()
	testutil.WaitFor(t, "web and proxy running", func() bool {
		return isState(ar, "web", structs.TaskStateRunning)() && isState(ar, "proxy", structs.TaskStateRunning)()
	})

	stop := alloc.Copy()
	stop.AllocModifyIndex = 20
	stop.DesiredStatus = structs.AllocDesiredStatusStop
	ar.Update(stop)
	testutil.WaitFor(t, "web being killed", func() bool { _, ok := killingAt(taskState(ar, "web")); return ok })
	testutil.WaitForWhile(t, "stopped", ar.IsTerminal, func() { clk.Advance(500 * time.Millisecond) })
	last := rec.last()
	webState, proxy, cleanup := last.TaskStates["web"], last.TaskStates["proxy"], last.TaskStates["cleanup"]
	proxyKilled, ok := killingAt(proxy)
	if !ok || proxyKilled.Before(webState.FinishedAt) {
		t.Fatalf("proxy was told to stop at %v (ok %v), before web died at %v", proxyKilled, ok, webState.FinishedAt)
	}
	if !hasStarted(cleanup) || cleanup.StartedAt.Before(proxy.FinishedAt) || last.ClientStatus != structs.AllocClientStatusComplete {
		t.Fatalf("alloc %s; cleanup %+v; proxy finished %v", last.ClientStatus, cleanup, proxy.FinishedAt)
	}
}

// When the main tasks of a batch alloc complete, a poststart task that is
// not a sidecar runs to completion, as in Nomad; only the sidecars are
// stopped, and only once nothing else is left running.
func TestLifecycleLetsAPoststartTaskFinishAfterTheMainTasks(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	drv := mock.New("", clk)
	defer drv.Shutdown()
	alloc := mockAlloc(structs.JobTypeBatch,
		lifecycleTask("work", "", false, map[string]any{"run_for": "1s"}),
		lifecycleTask("report", structs.TaskLifecycleHookPoststart, false, map[string]any{"run_for": "60s"}),
		lifecycleTask("logs", structs.TaskLifecycleHookPoststart, true, map[string]any{}),
	)
	ar, rec := newRunner(t, alloc, drv, clk, state.NewMemDB(), t.TempDir(), false)
	go ar.Run()
	testutil.WaitForWhile(t, "alloc done", ar.IsTerminal, func() { clk.Advance(500 * time.Millisecond) })
	last := rec.last()
	work, report, logs := last.TaskStates["work"], last.TaskStates["report"], last.TaskStates["logs"]
	if _, killed := killingAt(report); killed || report.Failed || report.State != structs.TaskStateDead {
		t.Fatalf("report was cut short (work finished %v): %+v", work.FinishedAt, report)
	}
	if logsKilled, ok := killingAt(logs); !ok || logsKilled.Before(report.FinishedAt) {
		t.Fatalf("logs was stopped at %v (ok %v), before report finished at %v", logsKilled, ok, report.FinishedAt)
	}
	if last.ClientStatus != structs.AllocClientStatusComplete {
		t.Fatalf("alloc %s", last.ClientStatus)
	}
}

// slowTaskStateDB holds back reading one task's state until released, so
// a test can have the alloc runner look at its tasks before that task has
// restored what it had.
type slowTaskStateDB struct {
	state.DB
	task    string
	release chan struct{}
}

func (d *slowTaskStateDB) GetTaskState(allocID, task string) (*structs.TaskState, error) {
	if task == d.task {
		<-d.release
	}
	return d.DB.GetTaskState(allocID, task)
}

// A restarted client restores an alloc whose init task had completed and
// whose main task had not started yet. However late the init task's
// restored state arrives, the main task then starts.
func TestLifecycleRestoredInitTaskLetsTheMainTaskStart(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	drv := mock.New("", clk)
	defer drv.Shutdown()
	alloc := mockAlloc(structs.JobTypeService,
		lifecycleTask("web", "", false, map[string]any{}),
		lifecycleTask("init", structs.TaskLifecycleHookPrestart, false, map[string]any{"run_for": "1s"}),
	)
	mem := state.NewMemDB()
	if err := mem.PutAlloc(alloc); err != nil {
		t.Fatal(err)
	}
	done := &structs.TaskState{State: structs.TaskStateDead, StartedAt: clk.Now(), FinishedAt: clk.Now()}
	if err := mem.PutTaskState(alloc.ID, "init", done); err != nil {
		t.Fatal(err)
	}
	db := &slowTaskStateDB{DB: mem, task: "init", release: make(chan struct{})}
	ar, rec := newRunner(t, alloc, drv, clk, db, t.TempDir(), true)
	go ar.Run()
	// The servers confirm the alloc while the init task is still reading
	// its state: the runner sees it pending and keeps the main gate shut.
	ar.Confirm()
	testutil.WaitFor(t, "a report after the confirmation", func() bool { return len(rec.statuses()) > 0 })
	if s := taskState(ar, "web"); hasStarted(s) {
		t.Fatalf("web started before the init task's state was known: %+v", s)
	}
	close(db.release)
	testutil.WaitFor(t, "web running", isState(ar, "web", structs.TaskStateRunning))
	if s := taskState(ar, "init"); s.State != structs.TaskStateDead || len(s.Events) != 0 {
		t.Fatalf("init ran again: %+v", s)
	}
	ar.Kill("test over")
	<-ar.Done()
}

// A group whose only long-running tasks are sidecars has nothing for them
// to serve: they are stopped, as Nomad does, instead of running forever.
func TestLifecycleStopsSidecarsWithNothingToServe(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	drv := mock.New("", clk)
	defer drv.Shutdown()
	alloc := mockAlloc(structs.JobTypeService,
		lifecycleTask("proxy", structs.TaskLifecycleHookPrestart, true, map[string]any{}),
		lifecycleTask("cleanup", structs.TaskLifecycleHookPoststop, false, map[string]any{"run_for": "1s"}),
	)
	ar, rec := newRunner(t, alloc, drv, clk, state.NewMemDB(), t.TempDir(), false)
	go ar.Run()
	testutil.WaitForWhile(t, "alloc done", ar.IsTerminal, func() { clk.Advance(500 * time.Millisecond) })
	if last := rec.last(); last.ClientStatus != structs.AllocClientStatusComplete || !hasStarted(last.TaskStates["cleanup"]) {
		t.Fatalf("alloc %s: %+v", last.ClientStatus, last.TaskStates)
	}
}
