package docker

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/drivers"
)

var _ drivers.ExecTaskDriver = (*Driver)(nil)

// ExecTask runs a command inside the task's running container (docker
// exec), as the task's user with the container's environment, and returns
// its exit code: script checks use it. Cancelling ctx kills the command's
// process, which the daemon reports by its host pid; the Engine API has no
// call to end an exec.
func (d *Driver) ExecTask(ctx context.Context, id, command string, args []string, out io.Writer) (int, error) {
	t, err := d.lookup(id)
	if err != nil {
		return 0, err
	}
	if d.exited(t) {
		return 0, fmt.Errorf("%w: %s has exited", drivers.ErrTaskNotFound, id)
	}
	ex, err := d.docker.ContainerExecCreate(ctx, t.containerID, container.ExecOptions{
		Cmd: append([]string{command}, args...), User: t.cfg.User, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return 0, fmt.Errorf("docker: exec in container %s: %w", shortID(t.containerID), err)
	}
	att, err := d.docker.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		return 0, fmt.Errorf("docker: attaching to exec in container %s: %w", shortID(t.containerID), err)
	}
	defer att.Close()
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(out, out, att.Reader)
		copied <- err
	}()
	select {
	case err := <-copied:
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("docker: reading exec output: %w", err)
		}
	case <-ctx.Done():
		ictx, cancel := d.call()
		defer cancel()
		if info, err := d.docker.ContainerExecInspect(ictx, ex.ID); err == nil && info.Running && info.Pid > 0 {
			_ = unix.Kill(info.Pid, unix.SIGKILL)
		}
		att.Close()
		<-copied
		return 0, ctx.Err()
	}
	ictx, cancel := d.call()
	defer cancel()
	info, err := d.docker.ContainerExecInspect(ictx, ex.ID)
	if err != nil {
		return 0, fmt.Errorf("docker: inspecting exec in container %s: %w", shortID(t.containerID), err)
	}
	return info.ExitCode, nil
}
