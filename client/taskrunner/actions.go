package taskrunner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/structs"
)

// A user may restart or signal a running task (`alloc restart`, `alloc
// signal`). Both are requests to Run, which owns the task's process and
// state: Run carries them out between the other things it waits for, so a
// restart never races with the task's own exit or with a kill, and every
// event is written by Run alone.

// ErrTaskNotRunning is returned for a restart or signal of a task that has
// no process now: not started yet, waiting to be restarted, or dead.
var ErrTaskNotRunning = errors.New("task is not running")

// Task event types of user actions. They are Nomad's names, so Nomad's
// tools show them as they show Nomad's own.
const (
	TaskRestartSignal = "Restart Signaled"
	TaskSignaling     = "Signaling"
)

// userRestartReason is the reason given in the events of a restart a user
// asked for.
const userRestartReason = "User requested restart"

type actionKind int

const (
	actionRestart actionKind = iota
	actionSignal
	// actionRestartUnhealthy is a check's restart (check_actions.go).
	actionRestartUnhealthy
)

// action is one user request to Run; Run answers on done (buffered, so
// Run never waits for a caller that gave up).
type action struct {
	kind   actionKind
	signal string
	reason string // actionRestartUnhealthy's
	done   chan error
}

// Restart stops the running task (its kill signal, then SIGKILL after
// kill_timeout) and starts it again at once. The restart is counted in the
// task's Restarts but not against its restart policy: the task did not
// fail. Restart returns once the old process has exited; the new one is
// started right after.
func (tr *TaskRunner) Restart(ctx context.Context) error {
	return tr.request(ctx, &action{kind: actionRestart})
}

// Signal sends the named signal to the running task through its driver.
// The caller validates the name (drivers.ParseSignal); the task is not
// stopped, whatever the signal does to it.
func (tr *TaskRunner) Signal(ctx context.Context, signal string) error {
	return tr.request(ctx, &action{kind: actionSignal, signal: signal})
}

func (tr *TaskRunner) request(ctx context.Context, a *action) error {
	a.done = make(chan error, 1)
	select {
	case tr.actions <- a:
	case <-tr.doneCh:
		return fmt.Errorf("%w: task %q is %s", ErrTaskNotRunning, tr.Name(), tr.TaskState().State)
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-a.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// refuse answers an action that arrived while the task has no process.
func (tr *TaskRunner) refuse(a *action) {
	a.done <- fmt.Errorf("%w: task %q is %s", ErrTaskNotRunning, tr.Name(), tr.TaskState().State)
}

// idle waits for ready while the task has no process, refusing actions
// meanwhile. It returns false when Run must end: the task was killed
// (recorded as dead) or the client is shutting down. A kill wins over
// ready, so a stop that arrives during a restart's wait is never followed
// by a start.
func idle[T any](tr *TaskRunner, ready <-chan T) bool {
	for {
		select {
		case <-tr.killCh:
			tr.markDead(killedEvent(tr.clock.Now(), nil), false)
			return false
		default:
		}
		select {
		case <-ready:
			return true
		case <-tr.killCh:
			tr.markDead(killedEvent(tr.clock.Now(), nil), false)
			return false
		case <-tr.shutdownCh:
			return false
		case a := <-tr.actions:
			tr.refuse(a)
		}
	}
}

// signal delivers a user's signal to the running attempt h.
func (tr *TaskRunner) signal(h *drivers.TaskHandle, name string) error {
	s, ok := tr.cfg.Driver.(drivers.Signaller)
	if !ok {
		return fmt.Errorf("%w (task %q runs on %s)", drivers.ErrSignalsUnsupported, tr.Name(), tr.cfg.Driver.Name())
	}
	tr.update(signalingEvent(tr.clock.Now(), name), nil)
	if err := s.SignalTask(h.TaskID, name); err != nil {
		return fmt.Errorf("signal %s to task %q: %w", name, tr.Name(), err)
	}
	return nil
}

// stopForRestart stops the running attempt h for a user's restart and
// records how it ended.
func (tr *TaskRunner) stopForRestart(h *drivers.TaskHandle, waitCh <-chan *drivers.ExitResult) {
	tr.update(restartSignalEvent(tr.clock.Now()), nil)
	res, _ := tr.stopProcess(h, tr.killTimeout(), waitCh)
	tr.finishAttempt(h, res, true)
}

// restartNow records the start of a user's restart: no delay, and the
// restart policy's count left alone.
func (tr *TaskRunner) restartNow() {
	tr.count(keyTaskRestart)
	now := tr.clock.Now()
	tr.update(restartingEvent(now, 0, userRestartReason), func(s *structs.TaskState) {
		s.State = structs.TaskStatePending
		s.Restarts++
		s.LastRestart = now
	})
}

// killTimeout is the task's kill_timeout, capped by the client's maximum.
func (tr *TaskRunner) killTimeout() time.Duration {
	timeout := tr.cfg.Task.KillTimeout
	if timeout <= 0 {
		timeout = structs.DefaultKillTimeout
	}
	if tr.cfg.MaxKillTimeout > 0 && timeout > tr.cfg.MaxKillTimeout {
		timeout = tr.cfg.MaxKillTimeout
	}
	return timeout
}

func restartSignalEvent(now time.Time) *structs.TaskEvent {
	e := newEvent(TaskRestartSignal, now)
	e.SetRestartReason(userRestartReason)
	e.DisplayMessage = userRestartReason
	return e
}

func signalingEvent(now time.Time, signal string) *structs.TaskEvent {
	e := newEvent(TaskSignaling, now)
	e.SetTaskSignal(signal)
	e.Details["signal"] = signal
	e.DisplayMessage = "Task being sent signal " + signal
	return e
}
