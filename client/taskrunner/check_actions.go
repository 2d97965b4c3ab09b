package taskrunner

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/drover-sched/drover/client/drivers"
)

// What the alloc's checks may ask of a task: run a script check in its
// context, and restart it when a check_restart limit is reached.

// ErrExecUnsupported is returned by Exec for a task whose driver cannot
// run commands in a task's context.
var ErrExecUnsupported = errors.New("driver cannot run commands in a task's context")

// Exec runs command with args in the running task's context, through its
// driver (drivers.ExecTaskDriver), writing the output to out, and returns
// the exit code. It fails with ErrTaskNotRunning when the task has no
// process now.
func (tr *TaskRunner) Exec(ctx context.Context, command string, args []string, out io.Writer) (int, error) {
	d, ok := tr.cfg.Driver.(drivers.ExecTaskDriver)
	if !ok {
		return 0, fmt.Errorf("%w (task %q runs on %s)", ErrExecUnsupported, tr.Name(), tr.cfg.Driver.Name())
	}
	tr.mu.Lock()
	h := tr.handle
	tr.mu.Unlock()
	if h == nil {
		return 0, fmt.Errorf("%w: task %q is %s", ErrTaskNotRunning, tr.Name(), tr.TaskState().State)
	}
	return d.ExecTask(ctx, h.TaskID, command, args, out)
}

// RestartUnhealthy stops the running task as a failure, for reason (a
// check that failed check_restart's limit). Unlike a user's Restart, the
// restart policy decides what follows and counts it: the task starts again
// after the policy's delay, or fails when its attempts are used up. It
// returns once the process has exited.
func (tr *TaskRunner) RestartUnhealthy(ctx context.Context, reason string) error {
	return tr.request(ctx, &action{kind: actionRestartUnhealthy, reason: reason})
}

// stopUnhealthy stops the running attempt h for RestartUnhealthy and
// returns its end as a failure, whatever the exit code, for the restart
// policy to judge.
func (tr *TaskRunner) stopUnhealthy(h *drivers.TaskHandle, waitCh <-chan *drivers.ExitResult, reason string) *drivers.ExitResult {
	e := restartSignalEvent(tr.clock.Now())
	e.SetRestartReason(reason)
	e.DisplayMessage = reason
	tr.update(e, nil)
	res, _ := tr.stopProcess(h, tr.killTimeout(), waitCh)
	tr.finishAttempt(h, res, true)
	if res.Successful() {
		// A task that exits cleanly on its kill signal was still stopped
		// for failing its checks.
		res = &drivers.ExitResult{Err: errors.New(reason)}
	}
	return res
}
