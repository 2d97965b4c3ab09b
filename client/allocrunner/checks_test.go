package allocrunner

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/checks"
	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/drivers/rawexec"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/client/state"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// service is a test HTTP service whose health the test sets.
type service struct {
	*httptest.Server
	failing atomic.Bool
	oldHits atomic.Int64 // requests for /old
	newHits atomic.Int64 // requests for /new
}

func newService(t *testing.T) *service {
	s := &service{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/old":
			s.oldHits.Add(1)
		case "/new":
			s.newHits.Add(1)
		}
		if s.failing.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *service) port(t *testing.T) int {
	_, p, _ := strings.Cut(s.Listener.Addr().String(), ":")
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkedAlloc is a deployment alloc whose group service has an http
// check against svc, through the alloc's "http" port.
func checkedAlloc(t *testing.T, svc *service, mode string) *structs.Allocation {
	a := deploymentAlloc(&structs.Task{Name: "web", Config: map[string]any{}})
	tg := a.Job.TaskGroups[0]
	tg.Update.HealthCheck = mode
	tg.Update.HealthyDeadline = time.Minute
	tg.Services = []*structs.Service{{Name: "web", PortLabel: "http", Checks: []*structs.ServiceCheck{
		{Name: "alive", Type: "http", Path: "/health", Interval: time.Second, Timeout: 5 * time.Second}}}}
	a.AllocatedResources = &structs.AllocatedResources{Shared: structs.AllocatedSharedResources{
		Ports: structs.AllocatedPorts{{Label: "http", Value: svc.port(t), HostIP: "127.0.0.1"}}}}
	return a
}

// With health_check = "checks" the alloc is healthy only once its checks
// have passed (and its tasks run) for min_healthy_time.
func TestChecksHealthWaitsForPassingChecks(t *testing.T) {
	svc := newService(t)
	svc.failing.Store(true)
	ar, rec, clk := startOnMock(t, checkedAlloc(t, svc, structs.UpdateHealthCheckChecks), state.NewMemDB())
	defer func() { ar.Kill("done"); <-ar.Done() }()
	testutil.WaitFor(t, "the check to fail", func() bool { return checkStatus(ar) == checks.StatusFailure })
	for i := 0; i < 30; i++ {
		clk.Advance(time.Second)
	}
	if rec.last().DeploymentStatus != nil {
		t.Fatalf("healthy while the check fails: %+v", rec.last().DeploymentStatus)
	}
	svc.failing.Store(false)
	testutil.WaitForWhile(t, "the check to pass", func() bool { return checkStatus(ar) == checks.StatusSuccess }, func() { clk.Advance(100 * time.Millisecond) })
	passedAt := clk.Now()
	testutil.WaitForWhile(t, "health", func() bool { return rec.last().DeploymentStatus != nil }, func() { clk.Advance(time.Second) })
	ds := rec.last().DeploymentStatus
	if !*ds.Healthy || ds.Timestamp.Sub(passedAt) < 9*time.Second {
		t.Fatalf("verdict %+v, check passed at %v", ds, passedAt)
	}
	res := ar.CheckResults()
	if len(res) != 1 {
		t.Fatalf("results %+v", res)
	}
	for id, r := range res {
		if r.ID != id || r.Check != "alive" || r.Service != "web" || r.Group != "g" || r.StatusCode != 200 || r.Mode != checks.ModeHealthiness {
			t.Fatalf("result %+v", r)
		}
	}
}

// Checks that never pass make the alloc unhealthy at healthy_deadline.
func TestChecksFailingUntilTheDeadlineAreUnhealthy(t *testing.T) {
	svc := newService(t)
	svc.failing.Store(true)
	ar, rec, clk := startOnMock(t, checkedAlloc(t, svc, structs.UpdateHealthCheckChecks), state.NewMemDB())
	defer func() { ar.Kill("done"); <-ar.Done() }()
	start := clk.Now()
	testutil.WaitForWhile(t, "verdict", func() bool { return rec.last().DeploymentStatus != nil }, func() { clk.Advance(time.Second) })
	if ds := rec.last().DeploymentStatus; *ds.Healthy || ds.Timestamp.Sub(start) < time.Minute {
		t.Fatalf("verdict %+v, started %v: want unhealthy at the deadline", ds, start)
	}
}

// With health_check = "task_states" failing checks do not matter.
func TestTaskStatesHealthIgnoresChecks(t *testing.T) {
	svc := newService(t)
	svc.failing.Store(true)
	ar, rec, clk := startOnMock(t, checkedAlloc(t, svc, structs.UpdateHealthCheckTaskStates), state.NewMemDB())
	defer func() { ar.Kill("done"); <-ar.Done() }()
	testutil.WaitFor(t, "the check to fail", func() bool { return checkStatus(ar) == checks.StatusFailure })
	testutil.WaitForWhile(t, "verdict", func() bool { return rec.last().DeploymentStatus != nil }, func() { clk.Advance(time.Second) })
	if !*rec.last().DeploymentStatus.Healthy {
		t.Fatal("task_states health must not wait for checks")
	}
}

func checkStatus(ar *AllocRunner) string {
	for _, r := range ar.CheckResults() {
		return r.Status
	}
	return ""
}

// A script check that keeps failing restarts its real raw_exec task
// through check_restart, counted by the task's restart policy; the
// script runs in the task's directory with its environment.
func TestCheckRestartRestartsARawExecTask(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := rawexec.New(nil, clk, true)
	defer drv.Shutdown()
	task := &structs.Task{Name: "web", Driver: "raw_exec",
		Config:        map[string]any{"command": "/bin/sh", "args": []any{"-c", "sleep 1000"}},
		RestartPolicy: &structs.RestartPolicy{Attempts: 5, Interval: time.Hour, Delay: time.Second, Mode: structs.RestartPolicyModeFail},
		Services: []*structs.Service{{Name: "web", Checks: []*structs.ServiceCheck{{
			Name: "script", Type: "script", Command: "/bin/sh",
			Args:     []string{"-c", `echo "$NOMAD_TASK_NAME in $(basename $PWD)"; exit 2`},
			Interval: 5 * time.Second, Timeout: 5 * time.Second,
			CheckRestart: &structs.CheckRestart{Limit: 2, Grace: 3 * time.Second}}}}},
	}
	alloc := mockAlloc(structs.JobTypeService, task)
	task.Driver = "raw_exec"
	ar, rec := newRunner(t, alloc, drv, clk, state.NewMemDB(), t.TempDir(), false)
	go ar.Run()
	defer func() {
		ar.Kill("done")
		testutil.WaitForWhile(t, "stopped", func() bool { return ar.IsTerminal() }, func() { clk.Advance(time.Second) })
	}()
	testutil.WaitFor(t, "running", func() bool { return rec.last().ClientStatus == structs.AllocClientStatusRunning })
	var res checks.Result
	testutil.WaitForWhile(t, "the script to run in the task and fail", func() bool {
		for _, r := range ar.CheckResults() {
			res = r
		}
		return res.StatusCode == 2
	}, func() { clk.Advance(time.Second) })
	if res.Status != checks.StatusFailure || res.Output != "web in web\n" || res.Task != "web" {
		t.Fatalf("script result %+v", res)
	}
	testutil.WaitForWhile(t, "check_restart to restart the task", func() bool {
		s := ar.TaskState("web")
		return s.Restarts >= 1 && s.State == structs.TaskStateRunning
	}, func() { clk.Advance(time.Second) })
	var signaled *structs.TaskEvent
	for _, e := range ar.TaskState("web").Events {
		if e.Type == "Restart Signaled" {
			signaled = e
		}
	}
	if signaled == nil || signaled.RestartReason() != `healthcheck: check "script" unhealthy` {
		t.Fatalf("restart event %+v", signaled)
	}
}

// An in-place update that changes the checks replaces them; one that
// leaves them alone keeps them running as they are.
func TestUpdateReplacesChangedChecks(t *testing.T) {
	svc := newService(t)
	alloc := checkedAlloc(t, svc, structs.UpdateHealthCheckTaskStates)
	alloc.Job.TaskGroups[0].Services[0].Checks[0].Path = "/old"
	ar, rec, clk := startOnMock(t, alloc, state.NewMemDB())
	defer func() { ar.Kill("done"); <-ar.Done() }()
	testutil.WaitFor(t, "running", func() bool { return rec.last().ClientStatus == structs.AllocClientStatusRunning })
	testutil.WaitFor(t, "the check to pass", func() bool { return checkStatus(ar) == checks.StatusSuccess })
	first := ar.checks.Load()

	same := alloc.Copy()
	same.AllocModifyIndex = 20
	ar.Update(same)
	if ar.checks.Load() != first {
		t.Fatal("an update that leaves the checks alone must keep them running")
	}

	changed := same.Copy()
	changed.AllocModifyIndex = 30
	changed.Job.TaskGroups[0].Services[0].Checks[0].Name = "renamed"
	changed.Job.TaskGroups[0].Services[0].Checks[0].Path = "/new"
	ar.Update(changed)
	if ar.checks.Load() == first || first.Specs()[0].Path != "/old" {
		t.Fatal("changed checks must replace the old ones")
	}
	testutil.WaitForWhile(t, "the new check to pass", func() bool {
		res := ar.CheckResults()
		for _, r := range res {
			return len(res) == 1 && r.Check == "renamed" && r.Status == checks.StatusSuccess
		}
		return false
	}, func() { clk.Advance(time.Second) })
	// The old check is stopped: only the new one probes as time passes.
	oldHits, newHits := svc.oldHits.Load(), svc.newHits.Load()
	testutil.WaitForWhile(t, "the new check to probe again", func() bool { return svc.newHits.Load() >= newHits+3 }, func() { clk.Advance(time.Second) })
	if svc.oldHits.Load() != oldHits {
		t.Fatal("the old check still runs")
	}
}

// A restored runner's checks wait for the servers' Confirm, as its
// tasks' restarts do, so check_restart cannot act for an alloc the
// servers may want stopped.
func TestRestoredRunnersChecksWaitForConfirm(t *testing.T) {
	svc := newService(t)
	clk := clock.NewFake(time.Time{})
	db := state.NewMemDB()
	base := t.TempDir()
	alloc := checkedAlloc(t, svc, structs.UpdateHealthCheckChecks)
	alloc.Job.TaskGroups[0].Services[0].Checks[0].Path = "/old"
	drv := mock.New("", clk)
	ar, rec := newRunner(t, alloc, drv, clk, db, base, false)
	go ar.Run()
	testutil.WaitFor(t, "running", func() bool { return rec.last().ClientStatus == structs.AllocClientStatusRunning })
	testutil.WaitFor(t, "a probe", func() bool { return svc.oldHits.Load() > 0 })
	ar.Shutdown()
	drv.Shutdown()

	drv2 := mock.New("", clk)
	defer drv2.Shutdown()
	stored, _ := db.GetAllocs()
	ar2, _ := newRunner(t, stored[0], drv2, clk, db, base, true)
	go ar2.Run()
	defer func() { ar2.Kill("done"); <-ar2.Done() }()
	// The loop serves commands only once it has started the task runners
	// (and, were it wrong, the checks).
	ar2.do(func() {})
	if ar2.checks.Load().Started() || checkStatus(ar2) != checks.StatusPending {
		t.Fatalf("checks started before Confirm: status %s", checkStatus(ar2))
	}
	ar2.Confirm()
	if !ar2.checks.Load().Started() {
		t.Fatal("Confirm did not start the checks")
	}
	testutil.WaitForWhile(t, "checks after Confirm", func() bool { return checkStatus(ar2) == checks.StatusSuccess }, func() { clk.Advance(time.Second) })
}
