package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/drivers"
)

// execWaitDelay bounds how long ExecTask waits for the output of a command
// that has exited but left children holding its output open. Real time:
// it waits for I/O.
const execWaitDelay = time.Second

// ExecTask runs command in task id's context (drivers.ExecTaskDriver): the
// task's environment and working directory, in a process group of its
// own, or, under an Isolation, inside the task's confinement (exec's
// namespaces, root, cgroups and credentials). The command is the caller's child; ctx's end kills its whole
// group, so a script that started children cannot outlive its timeout.
func (d *Driver) ExecTask(ctx context.Context, id, command string, args []string, out io.Writer) (int, error) {
	t, err := d.lookup(id)
	if err != nil {
		return 0, err
	}
	if d.exited(t) {
		return 0, fmt.Errorf("%w: task %s has exited", drivers.ErrTaskNotFound, id)
	}
	var cmd *exec.Cmd
	var started func(*exec.Cmd) error
	if iso := d.opts.Isolation; iso != nil {
		if cmd, started, err = iso.ExecCommand(t.cfg, t.isoState, t.pid, command, args); err != nil {
			return 0, err
		}
	} else {
		path, err := resolveCommand(command, t.cfg)
		if err != nil {
			return 0, err
		}
		cmd = exec.Command(path, args...)
		cmd.Dir = t.cfg.Dir
		cmd.Env = t.cfg.EnvList()
	}
	cmd.Stdout, cmd.Stderr = out, out
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	// A child left running in the background may hold the output pipe
	// open; the command's own exit is what counts.
	cmd.WaitDelay = execWaitDelay
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s: %w", command, err)
	}
	if started != nil {
		if err := started(cmd); err != nil {
			_ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
			_ = cmd.Wait()
			return 0, err
		}
	}
	pgid := cmd.Process.Pid
	stop := context.AfterFunc(ctx, func() { _ = unix.Kill(-pgid, unix.SIGKILL) })
	err = cmd.Wait()
	if !stop() {
		// ctx ended: the group was killed, whatever the exit says.
		return 0, ctx.Err()
	}
	// Children the command left behind in its group do not outlive it.
	_ = unix.Kill(-pgid, unix.SIGKILL)
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return exitErr.ExitCode(), nil
	}
	if err != nil {
		return 0, err
	}
	return 0, nil
}

var _ drivers.ExecTaskDriver = (*Driver)(nil)
