package taskrunner

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/client/artifact"
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/drivers/rawexec"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/client/logmon"
	"github.com/drover-sched/drover/client/state"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

type harness struct {
	tr      *TaskRunner
	db      *state.MemDB
	dir     *allocdir.AllocDir
	clk     *clock.Fake
	updates atomic.Int64
	cfg     Config
}

func newHarness(t *testing.T, task *structs.Task, jobType string, drv drivers.Driver, clk *clock.Fake) *harness {
	t.Helper()
	if task.RestartPolicy == nil {
		task.RestartPolicy = &structs.RestartPolicy{Attempts: 0, Mode: structs.RestartPolicyModeFail}
	}
	job := &structs.Job{ID: "job", Name: "job", Type: jobType, TaskGroups: []*structs.TaskGroup{{Name: "g", Tasks: []*structs.Task{task}}}}
	alloc := &structs.Allocation{ID: structs.GenerateUUID(), Name: "job.g[0]", JobID: "job", Job: job, TaskGroup: "g", Namespace: "default",
		AllocatedResources: &structs.AllocatedResources{Shared: structs.AllocatedSharedResources{Ports: structs.AllocatedPorts{{Label: "http", Value: 23456, HostIP: "127.0.0.1"}}}}}
	dir := allocdir.New(t.TempDir(), alloc.ID)
	if err := dir.Build([]string{task.Name}); err != nil {
		t.Fatal(err)
	}
	h := &harness{db: state.NewMemDB(), dir: dir, clk: clk}
	h.cfg = Config{
		Alloc: alloc, Task: task, Node: &structs.Node{ID: "node-1", Attributes: structs.NewAttributes(map[string]string{"kernel.name": "linux"})},
		AllocDir: dir, Driver: drv, StateDB: h.db, Clock: clk, Region: "global",
		HostEnv:  map[string]string{"PATH": "/usr/bin:/bin"},
		OnUpdate: func() { h.updates.Add(1) },
		// Artifact test servers listen on loopback, which a client
		// refuses unless allowed.
		Artifacts: &artifact.Fetcher{Sources: artifact.Sources{AllowedHosts: []artifact.HostRule{loopback}}},
	}
	h.tr = New(h.cfg)
	return h
}

var loopback, _ = artifact.ParseHostRule("127.0.0.1")

func (h *harness) run(t *testing.T) {
	go h.tr.Run()
	t.Cleanup(func() {
		h.tr.Kill("test over")
		<-h.tr.Done()
	})
}

// clientRestart stops h's runner as a stopping client does, leaving the
// task running, and returns the Config of the runner a new client makes
// for it: Restore set, on a new raw_exec driver.
func clientRestart(t *testing.T, h *harness, drv *rawexec.Driver) Config {
	t.Helper()
	h.tr.Shutdown()
	<-h.tr.Done()
	drv.Shutdown()
	drv2 := rawexec.New(nil, h.clk, true)
	t.Cleanup(drv2.Shutdown)
	cfg := h.cfg
	cfg.Driver, cfg.Restore = drv2, true
	return cfg
}

func eventTypes(s *structs.TaskState) []string {
	var out []string
	for _, e := range s.Events {
		out = append(out, e.Type)
	}
	return out
}

func (h *harness) dead() bool { return h.tr.TaskState().State == structs.TaskStateDead }

func TestBatchTaskThatExitsZeroCompletes(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	h := newHarness(t, &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "5s"}}, structs.JobTypeBatch, drv, clk)
	h.run(t)
	testutil.WaitForWhile(t, "task to finish", h.dead, func() { clk.Advance(time.Second) })
	s := h.tr.TaskState()
	if s.Failed || s.Restarts != 0 {
		t.Fatalf("state %+v", s)
	}
	want := []string{structs.TaskReceived, structs.TaskSetup, structs.TaskStarted, structs.TaskTerminated}
	if got := eventTypes(s); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("events %v, want %v", got, want)
	}
	if stored, _ := h.db.GetTaskState(h.cfg.Alloc.ID, "t"); stored == nil || stored.State != structs.TaskStateDead {
		t.Fatalf("state not persisted: %+v", stored)
	}
}

func TestRestartPolicyAttemptsThenFailed(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	task := &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1s", "exit_code": 1},
		RestartPolicy: &structs.RestartPolicy{Attempts: 2, Interval: 10 * time.Minute, Delay: 5 * time.Second, Mode: structs.RestartPolicyModeFail}}
	h := newHarness(t, task, structs.JobTypeService, drv, clk)
	h.run(t)
	testutil.WaitForWhile(t, "task to fail", h.dead, func() { clk.Advance(time.Second) })
	s := h.tr.TaskState()
	if !s.Failed || s.Restarts != 2 || drv.Starts() != 3 {
		t.Fatalf("failed=%v restarts=%d starts=%d", s.Failed, s.Restarts, drv.Starts())
	}
	last := s.Events[len(s.Events)-1]
	if last.Type != structs.TaskNotRestarting || !last.FailsTask {
		t.Fatalf("last event %+v", last)
	}
}

func TestRestartPolicyDelayModeWaitsOutTheInterval(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	task := &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1s", "exit_code": 1},
		RestartPolicy: &structs.RestartPolicy{Attempts: 1, Interval: time.Minute, Delay: time.Second, Mode: structs.RestartPolicyModeDelay}}
	h := newHarness(t, task, structs.JobTypeService, drv, clk)
	h.run(t)
	start := clk.Now()
	testutil.WaitForWhile(t, "the second restart", func() bool { return h.tr.TaskState().Restarts >= 2 }, func() { clk.Advance(time.Second) })
	var delayed *structs.TaskEvent
	for _, e := range h.tr.TaskState().Events {
		if e.Type == structs.TaskRestarting && strings.Contains(e.RestartReason(), `"delay"`) {
			delayed = e
		}
	}
	if delayed == nil || time.Duration(delayed.StartDelay()) < 50*time.Second {
		t.Fatalf("want a restart delayed to the end of the interval, got %+v", delayed)
	}
	testutil.WaitForWhile(t, "the third start", func() bool { return drv.Starts() >= 3 }, func() { clk.Advance(time.Second) })
	if clk.Now().Sub(start) < time.Minute {
		t.Fatalf("restarted after %v, before the interval ended", clk.Now().Sub(start))
	}
	if h.tr.TaskState().Failed {
		t.Fatal("delay mode must not fail the task")
	}
}

func TestUnrecoverableStartErrorFailsTask(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	task := &structs.Task{Name: "t", Driver: "mock", Config: map[string]any{"start_error": "no such image"},
		RestartPolicy: &structs.RestartPolicy{Attempts: 5, Interval: time.Hour, Delay: time.Second, Mode: structs.RestartPolicyModeFail}}
	h := newHarness(t, task, structs.JobTypeService, drv, clk)
	h.run(t)
	testutil.WaitFor(t, "task to fail", h.dead)
	s := h.tr.TaskState()
	if !s.Failed || s.Restarts != 0 {
		t.Fatalf("state %+v", s)
	}
	types := eventTypes(s)
	if types[len(types)-2] != structs.TaskDriverFailure {
		t.Fatalf("events %v", types)
	}
}

func rawTask(name, script string) *structs.Task {
	return &structs.Task{Name: name, Driver: "raw_exec", KillTimeout: 3 * time.Second,
		Env:       map[string]string{"WHERE": "${attr.kernel.name}"},
		Config:    map[string]any{"command": "/bin/sh", "args": []any{"-c", script}},
		LogConfig: &structs.LogConfig{MaxFiles: 2, MaxFileSizeMB: 1}}
}

func TestRawExecTaskEnvInterpolationAndRotatedLogs(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := rawexec.New(nil, clk, true)
	defer drv.Shutdown()
	// 2.5 MB of x's after the env line: with 1 MB files and max_files 2,
	// files .1 and .2 remain and .0 (with the env line) is deleted; so the
	// env goes to stderr, which is not rotated.
	task := rawTask("web", `echo "port=$NOMAD_PORT_http alloc=$NOMAD_ALLOC_ID where=$WHERE arg=$1" >&2; head -c 2500000 /dev/zero | tr '\0' x`)
	task.Config["args"] = []any{"-c", task.Config["args"].([]any)[1], "sh", "${NOMAD_ALLOC_ID}"}
	h := newHarness(t, task, structs.JobTypeBatch, drv, clk)
	h.run(t)
	testutil.WaitFor(t, "task to finish", h.dead)
	if s := h.tr.TaskState(); s.Failed {
		t.Fatalf("task failed: %+v", s.Events)
	}
	stderr, _ := os.ReadFile(filepath.Join(h.dir.LogDir, "web.stderr.0"))
	want := "port=23456 alloc=" + h.cfg.Alloc.ID + " where=linux arg=" + h.cfg.Alloc.ID + "\n"
	if string(stderr) != want {
		t.Fatalf("stderr %q, want %q", stderr, want)
	}
	if idx := logmon.Indexes(h.dir.LogDir, "web.stdout"); len(idx) != 2 || idx[0] != 1 || idx[1] != 2 {
		t.Fatalf("stdout files %v, want [1 2]", idx)
	}
	fi, _ := os.Stat(filepath.Join(h.dir.LogDir, "web.stdout.1"))
	if fi.Size() != 1<<20 {
		t.Fatalf("rotated file size %d", fi.Size())
	}
}

func TestKillSendsSignalThenSigkillAfterKillTimeout(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := rawexec.New(nil, clk, true)
	defer drv.Shutdown()
	ready := filepath.Join(t.TempDir(), "ready")
	task := rawTask("web", `trap "" INT; touch `+ready+`; sleep 1000`)
	h := newHarness(t, task, structs.JobTypeService, drv, clk)
	h.run(t)
	testutil.WaitFor(t, "task to start", func() bool { _, err := os.Stat(ready); return err == nil })
	waiters := clk.Pending()
	h.tr.Kill("test")
	if !clk.WaitForTimers(waiters+1, 10*time.Second) {
		t.Fatal("the runner did not wait for the kill timeout")
	}
	if h.dead() {
		t.Fatal("the task ignores SIGINT and must still be running")
	}
	clk.Advance(3 * time.Second)
	testutil.WaitFor(t, "task to be killed", h.dead)
	s := h.tr.TaskState()
	types := eventTypes(s)
	if s.Failed || types[len(types)-2] != structs.TaskKilling || types[len(types)-1] != structs.TaskKilled {
		t.Fatalf("state %+v events %v", s, types)
	}
	if ev := s.Events[len(s.Events)-2]; ev.KillTimeout() != 3*time.Second {
		t.Fatalf("killing event %+v", ev)
	}
}

func TestRestoreReattachesOrReportsDeadTask(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := rawexec.New(nil, clk, true)
	task := rawTask("web", "sleep 1000")
	task.RestartPolicy = &structs.RestartPolicy{Attempts: 2, Interval: time.Hour, Mode: structs.RestartPolicyModeFail}
	h := newHarness(t, task, structs.JobTypeService, drv, clk)
	go h.tr.Run()
	testutil.WaitFor(t, "task to run", func() bool { return h.tr.TaskState().State == structs.TaskStateRunning })
	handle, _ := h.db.GetTaskHandle(h.cfg.Alloc.ID, "web")
	// The client stops; the task keeps running. A new client re-attaches:
	// no new event, still running.
	cfg := clientRestart(t, h, drv)
	drv2 := cfg.Driver.(*rawexec.Driver)
	gate := make(chan struct{})
	cfg.StartGate = gate
	before := len(h.tr.TaskState().Events)
	tr2 := New(cfg)
	go tr2.Run()
	testutil.WaitFor(t, "re-attach", func() bool {
		st, err := drv2.InspectTask(handle.TaskID)
		return err == nil && st.State == drivers.TaskStateRunning
	})
	if s := tr2.TaskState(); s.State != structs.TaskStateRunning {
		t.Fatalf("re-attached task is %s", s.State)
	}
	if n := len(tr2.TaskState().Events); n != before {
		t.Fatalf("re-attaching added %d events", n-before)
	}
	tr2.Shutdown()
	<-tr2.Done()
	drv2.Shutdown()

	// The task dies while no client watches it.
	st, _ := h.db.GetTaskHandle(h.cfg.Alloc.ID, "web")
	drv3 := rawexec.New(nil, clk, true)
	defer drv3.Shutdown()
	if err := drv3.RecoverTask(st); err != nil {
		t.Fatal(err)
	}
	_ = drv3.DestroyTask(st.TaskID, true)

	cfg.Driver = drv3
	tr3 := New(cfg)
	go tr3.Run()
	testutil.WaitFor(t, "the dead task to be reported", func() bool {
		s := tr3.TaskState()
		return len(s.Events) > 0 && s.Events[len(s.Events)-1].Type == structs.TaskRestarting
	})
	var term *structs.TaskEvent
	for _, e := range tr3.TaskState().Events {
		if e.Type == structs.TaskTerminated {
			term = e
		}
	}
	if term == nil || term.Details["exit_code"] != "unknown" {
		t.Fatalf("want a Terminated event with an unknown exit, got %+v", term)
	}
	// The gate stays shut (the servers want it stopped): it is never
	// started again.
	tr3.Kill("alloc stopped")
	<-tr3.Done()
	for _, e := range tr3.TaskState().Events[before:] {
		if e.Type == structs.TaskStarted {
			t.Fatal("a task the servers stopped was restarted")
		}
	}
	if s := tr3.TaskState(); s.State != structs.TaskStateDead {
		t.Fatalf("state %+v", s)
	}
}

// A group's tasks may each ask for logs that fit the group's disk on
// their own (validation checks task by task) but not together: the
// client then rotates each stream within its share of the disk, so the
// group's logs stay in the disk the scheduler reserved.
func TestRotatedLogsOfAGroupStayWithinItsEphemeralDisk(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := rawexec.New(nil, clk, true)
	defer drv.Shutdown()
	task := rawTask("web", `head -c 5000000 /dev/zero | tr '\0' x`)
	task.LogConfig = &structs.LogConfig{MaxFiles: 10, MaxFileSizeMB: 1}
	h := newHarness(t, task, structs.JobTypeBatch, drv, clk)
	// Four tasks of 10 × 1 MB, two streams each, on a 20 MB disk: each
	// stream's share is 2.5 MB, two of its 1 MB files.
	tg := h.cfg.Alloc.Job.TaskGroups[0]
	tg.EphemeralDisk = &structs.EphemeralDisk{SizeMB: 20}
	for _, name := range []string{"side", "init", "cleanup"} {
		tg.Tasks = append(tg.Tasks, &structs.Task{Name: name, Driver: "raw_exec", LogConfig: &structs.LogConfig{MaxFiles: 10, MaxFileSizeMB: 1}})
	}
	h.run(t)
	testutil.WaitFor(t, "task to finish", h.dead)
	if s := h.tr.TaskState(); s.Failed {
		t.Fatalf("task failed: %+v", s.Events)
	}
	idx := logmon.Indexes(h.dir.LogDir, "web.stdout")
	if len(idx) != 2 || idx[0] != 3 || idx[1] != 4 {
		t.Fatalf("stdout files %v, want [3 4]: two 1 MB files of the 5 MB written", idx)
	}
}
