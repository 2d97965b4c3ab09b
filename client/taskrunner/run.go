package taskrunner

import (
	"context"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/logmon"
	"github.com/drover-sched/drover/client/restarts"
	"github.com/drover-sched/drover/structs"
)

// logDrainWait bounds how long an exited attempt's output is drained. It is
// real time on purpose: it waits for I/O, not for anything a test drives,
// and a process that escaped the group must not hold the runner forever.
const logDrainWait = 5 * time.Second

// Run is the task's goroutine. It returns when the task is dead, or on
// Shutdown with the task left as it is.
func (tr *TaskRunner) Run() {
	defer close(tr.doneCh)
	var (
		attached *drivers.TaskHandle
		exit     *drivers.ExitResult
	)
	var (
		logs    *logmon.TaskLogger
		logsErr error
	)
	if tr.cfg.Restore {
		// The logs are read before the driver re-attaches: a driver that
		// copies the task's output itself (docker) writes what the task
		// wrote while the client was away as soon as it re-attaches, and
		// a FIFO whose reader is not open yet refuses the write.
		logs, logsErr = tr.openLogs()
		attached, exit = tr.restore()
		if tr.TaskState().State == structs.TaskStateDead {
			// Finished before the client restarted. The alloc runner
			// may have looked at this task before its state was read
			// (a completed init task opens the main tasks' gate), so it
			// is told.
			if logs != nil {
				logs.Close()
			}
			tr.cfg.OnUpdate()
			return
		}
	} else {
		tr.update(receivedEvent(tr.clock.Now()), nil)
		logs, logsErr = tr.openLogs()
	}
	if logsErr != nil {
		tr.markDead(driverFailureEvent(tr.clock.Now(), logsErr), true)
		return
	}
	tr.logs = logs
	defer logs.Close()
	if !tr.cfg.Restore {
		tr.update(setupEvent(tr.clock.Now()), nil)
	}

	for {
		var startErr error
		if exit == nil {
			h := attached
			if h != nil {
				tr.poststart(h, true)
			} else {
				// Wait until the servers confirm the alloc should run.
				if !idle(tr, tr.cfg.StartGate) {
					return
				}
				h, startErr = tr.start()
				if startErr != nil && tr.killRequested() {
					// The kill cut the start short (a download or a
					// render): the task was stopped, not failed.
					tr.markDead(killedEvent(tr.clock.Now(), nil), false)
					return
				}
				if startErr != nil && closed(tr.shutdownCh) {
					// The client is stopping and cut the start short:
					// no restart to record; the next client starts the
					// task afresh.
					return
				}
			}
			attached = nil
			if startErr == nil {
				var outcome waitOutcome
				exit, outcome = tr.wait(h)
				switch outcome {
				case waitStopped:
					return
				case waitRestart:
					tr.restartNow()
					exit = nil
					continue
				}
			}
		} else {
			// The process died while the client was down.
			tr.update(terminatedEvent(tr.clock.Now(), exit), nil)
			tr.exited(exit)
		}

		decision, delay, reason := tr.tracker.Next(tr.clock.Now(), exit, startErr)
		exit = nil
		switch decision {
		case restarts.Done:
			tr.markDead(nil, false)
			return
		case restarts.Fail:
			tr.markDead(notRestartingEvent(tr.clock.Now(), reason), true)
			return
		}
		now := tr.clock.Now()
		tr.count(keyTaskRestart)
		tr.update(restartingEvent(now, delay, reason), func(s *structs.TaskState) {
			s.State = structs.TaskStatePending
			s.Restarts++
			s.LastRestart = now
		})
		if !idle(tr, tr.clock.After(delay)) {
			return
		}
	}
}

func (tr *TaskRunner) openLogs() (*logmon.TaskLogger, error) {
	// The group's streams share its ephemeral disk (structs.LogRotation).
	alloc, task := tr.current()
	bytes, files := alloc.LookupTaskGroup().LogRotation(task)
	return logmon.Open(tr.cfg.AllocDir.LogDir, tr.cfg.Task.Name, bytes, files)
}

// start starts one attempt: the prestart hooks prepare it (hooks.go),
// the driver starts it, the poststart hooks are told. A failure is
// recorded as an event (Driver Failure, or the failing hook's own) and
// returned for the restart policy to judge.
func (tr *TaskRunner) start() (*drivers.TaskHandle, error) {
	alloc, task := tr.current()
	td := tr.cfg.AllocDir.Task(task.Name)
	req, err := tr.prestart(&PrestartRequest{Alloc: alloc, Task: task, AllocDir: tr.cfg.AllocDir, TaskDir: td})
	if err != nil {
		return nil, err
	}
	env := req.Env
	mounts, err := volumeMounts(tr.cfg.Node, alloc, task)
	if err != nil {
		tr.logger.Warn("failed to resolve the task's volumes", "error", err)
		tr.update(driverFailureEvent(tr.clock.Now(), err), nil)
		return nil, err
	}
	cfg := &drivers.TaskConfig{
		ID:         alloc.ID + "/" + task.Name + "/" + structs.GenerateUUID()[:8],
		AllocID:    alloc.ID,
		TaskName:   task.Name,
		GroupName:  alloc.TaskGroup,
		User:       task.User,
		Config:     env.ParseConfig(task.Config),
		Env:        env.Map(),
		AllocDir:   tr.cfg.AllocDir.Root,
		TaskDir:    td.Dir,
		Dir:        td.Dir,
		StdoutPath: tr.logs.StdoutPath(),
		StderrPath: tr.logs.StderrPath(),
		Resources:  taskResources(alloc, task),

		NetNSPath:      tr.cfg.Network.NetNSPath,
		ResolvConfPath: tr.cfg.Network.ResolvConfPath,
		DNS:            tr.cfg.Network.DNS,
		Mounts:         mounts,
	}
	if alloc.Job != nil {
		cfg.JobName = alloc.Job.Name
	}
	h, err := tr.cfg.Driver.StartTask(cfg)
	if err != nil {
		tr.logger.Warn("failed to start task", "error", err)
		tr.update(driverFailureEvent(tr.clock.Now(), err), nil)
		return nil, err
	}
	tr.setHandle(h)
	tr.count(keyTaskRunning)
	now := tr.clock.Now()
	tr.update(startedEvent(now), func(s *structs.TaskState) {
		s.State = structs.TaskStateRunning
		if s.StartedAt.IsZero() {
			s.StartedAt = now
		}
	})
	tr.poststart(h, false)
	return h, nil
}

// current returns the newest alloc and the task as that alloc's job
// defines it (the runner's Config.Task if the job no longer has it).
func (tr *TaskRunner) current() (*structs.Allocation, *structs.Task) {
	tr.mu.Lock()
	alloc := tr.alloc
	tr.mu.Unlock()
	task := tr.cfg.Task
	if tg := alloc.LookupTaskGroup(); alloc.Job != nil && tg != nil {
		if t := tg.LookupTask(task.Name); t != nil {
			task = t
		}
	}
	return alloc, task
}

func taskResources(alloc *structs.Allocation, task *structs.Task) drivers.TaskResources {
	var r drivers.TaskResources
	if task.Resources != nil {
		r = drivers.TaskResources{CPUShares: int64(task.Resources.CPU), MemoryMB: int64(task.Resources.MemoryMB), MemoryMaxMB: int64(task.Resources.MemoryMaxMB)}
	}
	if alloc.AllocatedResources != nil {
		if t := alloc.AllocatedResources.Tasks[task.Name]; t != nil {
			r = drivers.TaskResources{CPUShares: t.Cpu.CpuShares, MemoryMB: t.Memory.MemoryMB, MemoryMaxMB: t.Memory.MemoryMaxMB, Cores: t.Cpu.ReservedCores}
		}
		r.Ports = alloc.AllocatedResources.Shared.GroupPorts()
		if t := alloc.AllocatedResources.Tasks[task.Name]; t != nil {
			r.Ports = structs.AppendNetworkPorts(r.Ports, t.Networks)
		}
	}
	return r
}

// waitOutcome says how an attempt's wait ended.
type waitOutcome int

const (
	// waitExited: the task exited by itself; the restart policy decides.
	waitExited waitOutcome = iota
	// waitStopped: Run must return (the task was killed and is dead, or
	// the client is shutting down and leaves it running).
	waitStopped
	// waitRestart: a user's restart stopped the task; start it again now.
	waitRestart
)

// wait waits for the attempt to end, carrying out users' signals and
// restarts meanwhile. It returns the exit of a task that exited by itself.
func (tr *TaskRunner) wait(h *drivers.TaskHandle) (*drivers.ExitResult, waitOutcome) {
	tr.logs.Start()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waitCh, err := tr.cfg.Driver.WaitTask(ctx, h.TaskID)
	if err != nil {
		tr.setHandle(nil)
		res := &drivers.ExitResult{ExitUnknown: true, Err: err}
		tr.exited(res)
		return res, waitExited
	}
	for {
		select {
		case res := <-waitCh:
			if res == nil {
				res = &drivers.ExitResult{ExitUnknown: true}
			}
			tr.finishAttempt(h, res, true)
			return res, waitExited
		case <-tr.killCh:
			tr.kill(h, waitCh)
			return nil, waitStopped
		case <-tr.shutdownCh:
			return nil, waitStopped
		case a := <-tr.actions:
			switch a.kind {
			case actionSignal:
				a.done <- tr.signal(h, a.signal)
				continue
			case actionRestartUnhealthy:
				res := tr.stopUnhealthy(h, waitCh, a.reason)
				a.done <- nil
				return res, waitExited
			}
			tr.stopForRestart(h, waitCh)
			a.done <- nil
			return nil, waitRestart
		}
	}
}

// finishAttempt releases the driver's resources of an exited attempt, lets
// its log copiers drain, records a Terminated event if asked, and then
// tells the exited hooks how it ended.
func (tr *TaskRunner) finishAttempt(h *drivers.TaskHandle, res *drivers.ExitResult, terminated bool) {
	if err := tr.cfg.Driver.DestroyTask(h.TaskID, true); err != nil {
		tr.logger.Debug("destroy task", "error", err)
	}
	tr.setHandle(nil)
	drained := make(chan struct{})
	go func() { tr.logs.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(logDrainWait):
	}
	if terminated {
		tr.update(terminatedEvent(tr.clock.Now(), res), nil)
	}
	tr.exited(res)
}

// kill stops the task with its kill signal, escalating after kill_timeout.
func (tr *TaskRunner) kill(h *drivers.TaskHandle, waitCh <-chan *drivers.ExitResult) {
	timeout := tr.killTimeout()
	tr.mu.Lock()
	reason := tr.killReason
	tr.mu.Unlock()
	tr.update(killingEvent(tr.clock.Now(), timeout, reason), nil)
	res, err := tr.stopProcess(h, timeout, waitCh)
	tr.finishAttempt(h, res, false)
	tr.markDead(killedEvent(tr.clock.Now(), err), false)
}

// stopProcess stops attempt h with the task's kill signal, escalating
// after timeout, and returns how it ended. A process the driver could not
// stop has an unknown exit carrying the driver's error.
func (tr *TaskRunner) stopProcess(h *drivers.TaskHandle, timeout time.Duration, waitCh <-chan *drivers.ExitResult) (*drivers.ExitResult, error) {
	err := tr.cfg.Driver.StopTask(h.TaskID, timeout, tr.cfg.Task.KillSignal)
	var res *drivers.ExitResult
	if err == nil {
		res = <-waitCh
	}
	if res == nil {
		res = &drivers.ExitResult{ExitUnknown: true, Err: err}
	}
	return res, err
}

// killRequested reports whether Kill has been called.
func (tr *TaskRunner) killRequested() bool { return closed(tr.killCh) }

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
