package client

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/structs"
)

// pidTask runs a raw_exec task that records its pid in its task dir, then
// sleeps.
func pidTask() *structs.Task {
	return shTask(`echo $$ > "$NOMAD_TASK_DIR/pid"; exec sleep 1000`)
}

func readPid(t *testing.T, c *Client, allocID string) int {
	t.Helper()
	var pid int
	path := filepath.Join(c.cfg.AllocDir(), allocID, "web", "local", "pid")
	testutil.WaitFor(t, "the task to write its pid", func() bool {
		b, _ := os.ReadFile(path)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0
	})
	return pid
}

func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(b), ") Z ")
}

func killAndWait(t *testing.T, pid int) {
	t.Helper()
	_ = syscall.Kill(pid, syscall.SIGKILL)
	testutil.WaitFor(t, "the task process to die", func() bool { return !processAlive(pid) })
}

func TestRestartedClientReattachesToRunningTask(t *testing.T) {
	e := newEnv(t, 10*time.Second)
	c1 := e.start(nil)
	a := e.fs.UpsertAlloc(allocFor(c1.NodeID(), job(structs.JobTypeService, pidTask())))
	e.waitServerStatus(a.ID, structs.AllocClientStatusRunning)
	pid := readPid(t, c1, a.ID)
	c1.Shutdown()
	if !processAlive(pid) {
		t.Fatal("shutting the client down must leave the task running")
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })

	c2 := e.start(nil)
	if c2.NodeID() != c1.NodeID() {
		t.Fatal("a restarted client must keep its node ID")
	}
	ar := c2.runner(a.ID)
	if ar == nil {
		t.Fatal("alloc not restored")
	}
	e.waitFor("the task state to be restored", func() bool {
		s := ar.TaskState("web")
		return s != nil && len(s.Events) > 0
	})
	e.clk.Advance(time.Minute) // any restart delay would pass
	ts := ar.TaskState("web")
	if ts.State != structs.TaskStateRunning || countEvents(ts, structs.TaskStarted) != 1 || countEvents(ts, structs.TaskRestarting) != 0 {
		t.Fatalf("re-attached task: %s, events %s", ts.State, eventList(ts))
	}
	if got := readPid(t, c2, a.ID); got != pid || !processAlive(pid) {
		t.Fatalf("pid %d, want the original %d still running", got, pid)
	}
	if got := e.serverStatus(a.ID); got != structs.AllocClientStatusRunning {
		t.Fatalf("server sees %s", got)
	}
	// The re-attached task can still be stopped.
	e.fs.StopAlloc(a.ID)
	e.waitServerStatus(a.ID, structs.AllocClientStatusComplete)
	testutil.WaitFor(t, "the task to be killed", func() bool { return !processAlive(pid) })
}

func TestTaskThatDiedWhileClientWasDownIsReportedDead(t *testing.T) {
	e := newEnv(t, 10*time.Second)
	c1 := e.start(nil)
	a := e.fs.UpsertAlloc(allocFor(c1.NodeID(), job(structs.JobTypeService, pidTask())))
	e.waitServerStatus(a.ID, structs.AllocClientStatusRunning)
	pid := readPid(t, c1, a.ID)
	c1.Shutdown()
	killAndWait(t, pid)

	c2 := e.start(nil)
	e.waitServerStatus(a.ID, structs.AllocClientStatusFailed)
	ts := e.fs.Alloc(a.ID).TaskStates["web"]
	if ts.State != structs.TaskStateDead || !ts.Failed {
		t.Fatalf("task %+v", ts)
	}
	var term *structs.TaskEvent
	for _, ev := range ts.Events {
		if ev.Type == structs.TaskTerminated {
			term = ev
		}
	}
	if term == nil || term.Details["exit_code"] != "unknown" {
		t.Fatalf("want a Terminated event with an unknown exit code, got %s", eventList(ts))
	}
	_ = c2
}

func TestReconnectingClientNeverRestartsAllocStoppedMeanwhile(t *testing.T) {
	e := newEnv(t, 10*time.Second)
	c1 := e.start(nil)
	task := pidTask()
	// The restart policy would restart a task that died...
	task.RestartPolicy = &structs.RestartPolicy{Attempts: 3, Interval: time.Hour, Delay: time.Second, Mode: structs.RestartPolicyModeFail}
	a := e.fs.UpsertAlloc(allocFor(c1.NodeID(), job(structs.JobTypeService, task)))
	e.waitServerStatus(a.ID, structs.AllocClientStatusRunning)
	pid := readPid(t, c1, a.ID)
	c1.Shutdown()

	// ...it dies while the client is away, and the servers stop the alloc.
	killAndWait(t, pid)
	e.fs.StopAlloc(a.ID)
	pidFile := filepath.Join(e.dir, "alloc", a.ID, "web", "local", "pid")
	os.Remove(pidFile)

	c2 := e.start(nil)
	e.waitServerStatus(a.ID, structs.AllocClientStatusComplete)
	e.clk.Advance(time.Minute)
	ts := c2.runner(a.ID).TaskState("web")
	if n := countEvents(ts, structs.TaskStarted); n != 1 {
		t.Fatalf("the task was started %d times; a stopped alloc must never restart (%s)", n, eventList(ts))
	}
	if _, err := os.Stat(pidFile); err == nil {
		t.Fatal("a new task process ran")
	}
}

func TestAllocStatsSamplesRunningTask(t *testing.T) {
	e := newEnv(t, 10*time.Second)
	c := e.start(nil)
	a := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeService, pidTask())))
	e.waitServerStatus(a.ID, structs.AllocClientStatusRunning)
	readPid(t, c, a.ID)
	st, err := c.AllocStats(a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.ResourceUsage.Pids < 1 || st.ResourceUsage.MemoryRSS == 0 || st.Tasks["web"] == nil {
		t.Fatalf("stats %+v", st)
	}
	if _, err := c.AllocStats("nope"); err == nil {
		t.Fatal("want an error for an unknown alloc")
	}
	e.fs.StopAlloc(a.ID)
	e.waitServerStatus(a.ID, structs.AllocClientStatusComplete)
}
