package drivers

import (
	"context"
	"io"
)

// ExecTaskDriver is a driver that can run a command in a running task's
// context: its environment, working directory and user (and whatever else
// the driver confines the task with). Script checks use it. Drivers that
// cannot (the mock driver, a driver without processes) do not implement
// it, and a script check on their tasks fails saying so.
type ExecTaskDriver interface {
	// ExecTask runs command with args for the running task taskID and
	// waits for it, writing its stdout and stderr to out. It returns the
	// command's exit code. Cancelling ctx kills the command and everything
	// it started, and ExecTask then returns ctx's error.
	ExecTask(ctx context.Context, taskID, command string, args []string, out io.Writer) (int, error)
}
