package docker

import (
	"context"
	"errors"
	"sync/atomic"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"

	"github.com/drover-sched/drover/client/drivers"
)

// task is one container the driver tracks, from start (or re-attach) to
// destroy. Its waiter goroutine owns result and completedAt until it
// closes done; readers take d.mu.
type task struct {
	cfg         *drivers.TaskConfig
	containerID string
	imageID     string
	startedAt   time.Time
	tty         bool
	// killed is set once the driver sent SIGKILL itself, so that its exit
	// is not mistaken for an OOM kill.
	killed atomic.Bool

	// cancel stops the waiter and the log copier without touching the
	// container (client shutdown, destroy).
	cancel   context.CancelFunc
	done     chan struct{} // closed once the container exited or waiting stopped
	logsDone chan struct{} // closed when the log copier returns

	result      *drivers.ExitResult
	completedAt time.Time
}

// driverState is the opaque part of a TaskHandle.
type driverState struct {
	ContainerID string
	ImageID     string
	Image       string
	TTY         bool
}

// logDrainTimeout bounds how long an exit waits for the last of the
// container's output to reach the log FIFOs.
const logDrainTimeout = 5 * time.Second

// track registers t and starts its waiter and log copier. logsFrom is
// where the copy begins: the zero cursor for a new container (all of it),
// the previous client's cursor for a recovered one.
func (d *Driver) track(t *task, logsFrom logCursor, logs *logWriters) {
	ctx, cancel := context.WithCancel(d.ctx)
	t.cancel = cancel
	t.done = make(chan struct{})
	t.logsDone = make(chan struct{})
	d.mu.Lock()
	d.tasks[t.cfg.ID] = t
	d.mu.Unlock()
	d.wg.Add(2)
	go func() {
		defer d.wg.Done()
		d.copyLogs(ctx, t, logsFrom, logs)
	}()
	go func() {
		defer d.wg.Done()
		res := d.waitContainer(ctx, t)
		if res != nil {
			// The output of a container that exited is complete in the
			// daemon; let the copier finish so that logs are in place
			// when the exit is reported.
			timer := time.NewTimer(logDrainTimeout)
			select {
			case <-t.logsDone:
			case <-timer.C:
			case <-ctx.Done():
			}
			timer.Stop()
		}
		d.mu.Lock()
		t.result = res
		if res != nil {
			t.completedAt = d.clock.Now()
		}
		d.mu.Unlock()
		close(t.done)
	}()
}

// waitContainer blocks until the container stops running and returns how
// it ended, or nil when ctx ends first.
func (d *Driver) waitContainer(ctx context.Context, t *task) *drivers.ExitResult {
	for {
		respCh, errCh := d.docker.ContainerWait(ctx, t.containerID, container.WaitConditionNotRunning)
		select {
		case <-respCh:
			return d.exitOf(t)
		case err := <-errCh:
			if ctx.Err() != nil {
				return nil
			}
			if cerrdefs.IsNotFound(err) {
				return &drivers.ExitResult{ExitUnknown: true, Err: errors.New("container was removed outside Drover")}
			}
			d.logger.Warn("waiting for container failed; retrying", "container", t.containerID, "error", err)
			d.noticeHealth()
			select {
			case <-ctx.Done():
				return nil
			case <-d.clock.After(time.Second):
			}
		case <-ctx.Done():
			return nil
		}
	}
}

// exitOf reads the exit code and OOM flag of a stopped container from
// inspect, which knows them even for an exit that happened while the
// client was away.
func (d *Driver) exitOf(t *task) *drivers.ExitResult {
	ctx, cancel := d.call()
	defer cancel()
	info, err := d.docker.ContainerInspect(ctx, t.containerID)
	if err != nil {
		return &drivers.ExitResult{ExitUnknown: true, Err: err}
	}
	if info.State == nil {
		return &drivers.ExitResult{ExitUnknown: true}
	}
	res := &drivers.ExitResult{ExitCode: info.State.ExitCode, OOMKilled: info.State.OOMKilled}
	if !res.OOMKilled && res.ExitCode == 128+int(syscall.SIGKILL) && !t.killed.Load() &&
		info.HostConfig != nil && info.HostConfig.Memory > 0 {
		started, _ := time.Parse(time.RFC3339Nano, info.State.StartedAt)
		res.OOMKilled = d.confirmOOM(t.containerID, started)
	}
	if info.State.Error != "" {
		res.Err = errors.New(info.State.Error)
	}
	return res
}

// exited reports whether the container has exited (not merely stopped
// being waited for).
func (d *Driver) exited(t *task) bool {
	return drivers.Exited(t.done, &d.mu, &t.result)
}
