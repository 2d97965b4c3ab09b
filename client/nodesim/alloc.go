package nodesim

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/restarts"
	"github.com/drover-sched/drover/structs"
)

// simAlloc is one allocation on a simulated node. Guarded by its node's
// mutex, like everything it holds; its timers lock that mutex.
type simAlloc struct {
	n           *node
	id          string
	createIndex uint64
	basis       uint64 // AllocModifyIndex of the version the client acts on
	jobType     string
	status      string
	desc        string
	stopping    bool
	tasks       map[string]*simTask
}

// simTask is a task run with the mock driver's semantics.
type simTask struct {
	name    string
	cfg     mockConfig
	cfgErr  error
	driver  string
	state   *structs.TaskState
	timer   *time.Timer
	gen     int // bumped whenever the task's timer is replaced
	restart restarts.Tracker
}

// mockConfig is the part of the mock driver's config the simulator
// honours: the task's life and how it ends.
type mockConfig struct {
	RunFor            time.Duration
	ExitCode          int64
	StartError        string
	StartErrorRecover bool
	KillAfter         time.Duration
}

func parseMock(cfg map[string]any) (mockConfig, error) {
	var c mockConfig
	var errs [5]error
	c.RunFor, errs[0] = drivers.ConfigDuration(cfg, structs.MockConfigRunFor)
	c.ExitCode, errs[1] = drivers.ConfigInt(cfg, structs.MockConfigExitCode, 0)
	c.StartError, errs[2] = drivers.ConfigString(cfg, structs.MockConfigStartError)
	c.StartErrorRecover, errs[3] = drivers.ConfigBool(cfg, structs.MockConfigStartErrorRecoverable)
	c.KillAfter, errs[4] = drivers.ConfigDuration(cfg, structs.MockConfigKillAfter)
	return c, errors.Join(errs[:]...)
}

func event(typ, msg string) *structs.TaskEvent {
	return &structs.TaskEvent{Type: typ, Time: time.Now().UnixNano(), Message: msg, DisplayMessage: msg}
}

// startAlloc begins a new alloc. Caller holds n.mu.
func (n *node) startAlloc(a *structs.Allocation) *simAlloc {
	sa := &simAlloc{n: n, id: a.ID, createIndex: a.CreateIndex, basis: a.AllocModifyIndex,
		status: structs.AllocClientStatusPending, tasks: map[string]*simTask{}}
	n.sim.stats.AllocsStarted.Add(1)
	var tg *structs.TaskGroup
	if a.Job != nil {
		sa.jobType = a.Job.Type
		tg = a.Job.LookupTaskGroup(a.TaskGroup)
	}
	if tg == nil {
		sa.setStatus(structs.AllocClientStatusFailed, fmt.Sprintf("task group %q is not in the alloc's job", a.TaskGroup))
		sa.report()
		return sa
	}
	for _, t := range tg.Tasks {
		st := &simTask{name: t.Name, driver: t.Driver, state: &structs.TaskState{State: structs.TaskStatePending,
			Events: []*structs.TaskEvent{event(structs.TaskReceived, "Task received by client")}}}
		st.cfg, st.cfgErr = parseMock(t.Config)
		st.restart = restarts.New(tg.RestartPolicy, sa.jobType, t, n.rnd.Int64N)
		sa.tasks[t.Name] = st
	}
	for _, st := range sa.tasks {
		sa.startTask(st)
	}
	sa.report()
	return sa
}

// startTask runs a task, as the mock driver's StartTask would.
func (sa *simAlloc) startTask(t *simTask) {
	var startErr error
	switch {
	case t.driver != "mock_driver" && t.driver != "mock":
		startErr = fmt.Errorf("driver %q is not simulated; nodesim runs mock_driver tasks only", t.driver)
	case t.cfgErr != nil:
		startErr = t.cfgErr
	case t.cfg.StartError != "":
		startErr = errors.New(t.cfg.StartError)
		if t.cfg.StartErrorRecover {
			startErr = &drivers.RecoverableError{Err: startErr}
		}
	}
	if startErr != nil {
		t.state.Events = append(t.state.Events, event(structs.TaskDriverFailure, startErr.Error()))
		sa.afterExit(t, nil, startErr)
		return
	}
	now := time.Now()
	t.state.State, t.state.StartedAt = structs.TaskStateRunning, now
	t.state.Events = append(t.state.Events, event(structs.TaskStarted, "Task started by client"))
	if t.cfg.RunFor > 0 {
		sa.arm(t, t.cfg.RunFor, func() { sa.exited(t, &drivers.ExitResult{ExitCode: int(t.cfg.ExitCode)}) })
	}
}

// arm replaces t's timer; fn runs under n.mu unless the timer was replaced.
func (sa *simAlloc) arm(t *simTask, d time.Duration, fn func()) {
	if t.timer != nil {
		t.timer.Stop()
	}
	t.gen++
	gen := t.gen
	t.timer = time.AfterFunc(d, func() {
		n := sa.n
		n.mu.Lock()
		defer n.mu.Unlock()
		if gen != t.gen || n.sim.ctx.Err() != nil {
			return
		}
		fn()
		sa.report()
	})
}

func (sa *simAlloc) exited(t *simTask, res *drivers.ExitResult) {
	ev := &structs.TaskEvent{Type: structs.TaskTerminated, Time: time.Now().UnixNano(), Message: fmt.Sprintf("Exit Code: %d", res.ExitCode)}
	t.state.Events = append(t.state.Events, ev.SetExitCode(res.ExitCode).SetSignal(res.Signal))
	sa.afterExit(t, res, nil)
}

// afterExit applies the restart policy, as the task runner does.
func (sa *simAlloc) afterExit(t *simTask, res *drivers.ExitResult, startErr error) {
	if sa.stopping {
		sa.dead(t, false)
		return
	}
	decision, wait, reason := t.restart.Next(time.Now(), res, startErr)
	switch decision {
	case restarts.Done:
		sa.dead(t, false)
	case restarts.Restart:
		t.state.State = structs.TaskStatePending
		t.state.Restarts++
		t.state.LastRestart = time.Now()
		t.state.Events = append(t.state.Events, event(structs.TaskRestarting, reason))
		sa.arm(t, wait, func() { sa.startTask(t) })
	default:
		t.state.Events = append(t.state.Events, event(structs.TaskNotRestarting, reason))
		sa.dead(t, true)
		// A failed task takes its siblings down, as in the alloc runner.
		for _, o := range sa.tasks {
			if o != t && o.state.State != structs.TaskStateDead {
				o.state.Events = append(o.state.Events, event(structs.TaskSiblingFailed, "Task's sibling "+t.name+" failed"))
				sa.dead(o, false)
			}
		}
	}
}

func (sa *simAlloc) dead(t *simTask, failed bool) {
	if t.timer != nil {
		t.timer.Stop()
		t.gen++
	}
	t.state.State, t.state.Failed, t.state.FinishedAt = structs.TaskStateDead, failed, time.Now()
}

// update takes a newer version from the servers: a desired stop or evict
// kills the tasks (after kill_after, as the mock driver's StopTask).
func (sa *simAlloc) update(a *structs.Allocation) {
	if a.AllocModifyIndex > sa.basis {
		sa.basis = a.AllocModifyIndex
	}
	if !a.ServerTerminalStatus() || sa.stopping {
		return
	}
	sa.stopping = true
	sa.n.sim.stats.AllocsStopped.Add(1)
	for _, t := range sa.tasks {
		if t.state.State == structs.TaskStateDead {
			continue
		}
		t.state.Events = append(t.state.Events, event(structs.TaskKilling, "Sent interrupt"))
		if t.state.State == structs.TaskStateRunning && t.cfg.KillAfter > 0 {
			sa.arm(t, t.cfg.KillAfter, func() {
				sa.exited(t, &drivers.ExitResult{ExitCode: 128 + int(syscall.SIGINT), Signal: int(syscall.SIGINT)})
			})
			continue
		}
		t.state.Events = append(t.state.Events, event(structs.TaskKilled, "Task successfully killed"))
		sa.dead(t, false)
	}
	sa.report()
}

func (sa *simAlloc) stopTimers() {
	for _, t := range sa.tasks {
		if t.timer != nil {
			t.timer.Stop()
			t.gen++
		}
	}
}

// setStatus records a client status change in the fleet's counters.
func (sa *simAlloc) setStatus(status, desc string) {
	st := &sa.n.sim.stats
	if status != sa.status {
		if sa.status == structs.AllocClientStatusRunning {
			st.AllocsRunning.Add(-1)
		}
		switch status {
		case structs.AllocClientStatusRunning:
			st.AllocsRunning.Add(1)
		case structs.AllocClientStatusComplete:
			st.AllocsComplete.Add(1)
		case structs.AllocClientStatusFailed:
			st.AllocsFailed.Add(1)
		}
	}
	sa.status, sa.desc = status, desc
}

// report queues the alloc's client view for the next batch, derived from
// its tasks as the alloc runner derives it. Caller holds n.mu.
func (sa *simAlloc) report() {
	states := make(map[string]*structs.TaskState, len(sa.tasks))
	for name, t := range sa.tasks {
		states[name] = t.state.Copy()
	}
	if len(sa.tasks) > 0 {
		sa.setStatus(structs.ClientStatusFromTasks(states, sa.status))
	}
	n := sa.n
	n.pending[sa.id] = &structs.Allocation{ID: sa.id, NodeID: n.id, ClientStatus: sa.status,
		ClientDescription: sa.desc, TaskStates: states, AllocModifyIndex: sa.basis}
	n.armFlush(n.sim.cfg.UpdateInterval)
}
