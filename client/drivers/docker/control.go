package docker

import (
	"context"
	"fmt"
	"strconv"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/drover-sched/drover/client/drivers"
)

// DefaultSignal is what StopTask sends when the task names no kill_signal,
// as Nomad's docker driver: SIGTERM.
const DefaultSignal = syscall.SIGTERM

// WaitTask delivers the exit result.
func (d *Driver) WaitTask(ctx context.Context, id string) (<-chan *drivers.ExitResult, error) {
	t, err := d.lookup(id)
	if err != nil {
		return nil, err
	}
	return drivers.WaitLocked(ctx, t.done, &d.mu, &t.result), nil
}

// StopTask sends the kill signal to the container's main process and
// kills the container if it has not exited after timeout.
func (d *Driver) StopTask(id string, timeout time.Duration, signal string) error {
	t, err := d.lookup(id)
	if err != nil {
		return err
	}
	sig, err := drivers.ParseSignal(signal, DefaultSignal)
	if err != nil {
		return err
	}
	if d.exited(t) {
		return nil
	}
	if err := d.kill(t, sig); err != nil {
		return err
	}
	select {
	case <-t.done:
		return nil
	case <-d.clock.After(timeout):
	}
	return d.kill(t, syscall.SIGKILL)
}

// SignalTask delivers a signal to the container's main process.
func (d *Driver) SignalTask(id, signal string) error {
	t, err := d.lookup(id)
	if err != nil {
		return err
	}
	if signal == "" {
		return errNoSignal
	}
	sig, err := drivers.ParseSignal(signal, 0)
	if err != nil {
		return err
	}
	if d.exited(t) {
		return fmt.Errorf("%w: %s has exited", drivers.ErrTaskNotFound, id)
	}
	return d.kill(t, sig)
}

// kill sends sig; a container that is already gone or stopped is not an
// error, since what the caller wanted (it to stop) is true.
func (d *Driver) kill(t *task, sig syscall.Signal) error {
	if sig == syscall.SIGKILL {
		t.killed.Store(true)
	}
	ctx, cancel := d.call()
	defer cancel()
	err := d.docker.ContainerKill(ctx, t.containerID, strconv.Itoa(int(sig)))
	if err == nil || cerrdefs.IsNotFound(err) || cerrdefs.IsConflict(err) {
		return nil
	}
	if d.exited(t) {
		return nil
	}
	return fmt.Errorf("docker: signal %v to container %s: %w", sig, shortID(t.containerID), err)
}

// DestroyTask removes the container (unless gc { container = false }) and
// releases its image. With force it kills a container that still runs.
func (d *Driver) DestroyTask(id string, force bool) error {
	t, err := d.lookup(id)
	if err != nil {
		return err
	}
	if !d.exited(t) {
		if !force {
			return drivers.ErrTaskRunning
		}
		if err := d.kill(t, syscall.SIGKILL); err != nil {
			return err
		}
		select {
		case <-t.done:
		case <-d.ctx.Done():
		}
	}
	t.cancel()
	<-t.done
	<-t.logsDone
	if d.opts.Config.GC.Container {
		if err := d.removeContainer(t.containerID); err != nil {
			return fmt.Errorf("docker: removing container %s: %w", shortID(t.containerID), err)
		}
	}
	removeCursor(t.cfg.TaskDir, t.containerID)
	d.images.release(t.imageID, imageOf(t))
	d.mu.Lock()
	delete(d.tasks, id)
	d.mu.Unlock()
	return nil
}

// imageOf is the image reference the task was started with.
func imageOf(t *task) string {
	s, _ := drivers.ConfigString(t.cfg.Config, "image")
	return s
}

// InspectTask returns the task's status.
func (d *Driver) InspectTask(id string) (*drivers.TaskStatus, error) {
	t, err := d.lookup(id)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return drivers.StatusOf(id, t.startedAt, t.result, t.completedAt), nil
}
