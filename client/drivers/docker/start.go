package docker

import (
	"encoding/json"
	"errors"
	"fmt"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"

	"github.com/drover-sched/drover/client/drivers"
)

// StartTask creates and starts one container for this attempt. A restart
// is a new attempt with a new task ID, so it gets a new container; the
// old one is the task runner's to destroy.
func (d *Driver) StartTask(cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if d.clientErr != nil {
		return nil, fmt.Errorf("docker: %w: %v", drivers.ErrDisabled, d.clientErr)
	}
	tc, err := ParseTaskConfig(cfg.Config)
	if err != nil {
		return nil, err
	}
	spec, err := d.buildSpec(cfg, tc)
	if err != nil {
		return nil, err
	}
	if err := d.joinOwnAlloc(cfg, spec.HostConfig); err != nil {
		return nil, err
	}
	if err := d.sandboxNetwork(cfg, tc, spec.HostConfig); err != nil {
		return nil, err
	}
	imageID, err := d.images.ensure(tc)
	if err != nil {
		return nil, err
	}
	ctx, cancel := d.call()
	defer cancel()
	created, err := d.docker.ContainerCreate(ctx, spec.Config, spec.HostConfig, spec.Network, nil, spec.Name)
	if err != nil {
		d.images.release(imageID, tc.Image)
		if cerrdefs.IsInvalidArgument(err) {
			return nil, fmt.Errorf("docker: creating the container of image %q: %w", tc.Image, err)
		}
		return nil, &drivers.RecoverableError{Err: fmt.Errorf("docker: creating the container of image %q: %w", tc.Image, err)}
	}
	logs, err := openLogWriters(cfg)
	if err != nil {
		_ = d.removeContainer(created.ID)
		d.images.release(imageID, tc.Image)
		return nil, &drivers.RecoverableError{Err: err}
	}
	if err := d.docker.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		logs.Close()
		_ = d.removeContainer(created.ID)
		d.images.release(imageID, tc.Image)
		return nil, fmt.Errorf("docker: starting container %s of image %q: %w", shortID(created.ID), tc.Image, err)
	}
	t := &task{cfg: cfg, containerID: created.ID, imageID: imageID, startedAt: d.clock.Now(), tty: tc.TTY}
	d.track(t, logCursor{}, logs)
	state, _ := json.Marshal(driverState{ContainerID: created.ID, ImageID: imageID, Image: tc.Image, TTY: tc.TTY})
	d.logger.Debug("started container", "task", cfg.ID, "container", shortID(created.ID), "image", tc.Image)
	return &drivers.TaskHandle{Version: 1, Driver: Name, TaskID: cfg.ID, Config: cfg, StartedAt: t.startedAt, DriverState: state}, nil
}

// RecoverTask re-attaches to the container named in the handle: the same
// container, whether it still runs or exited while the client was away
// (its waiter then reports the real exit code at once).
func (d *Driver) RecoverTask(h *drivers.TaskHandle) error {
	if h == nil || h.Config == nil {
		return fmt.Errorf("%w: empty handle", drivers.ErrTaskNotFound)
	}
	if _, err := d.lookup(h.Config.ID); err == nil {
		return nil
	}
	var s driverState
	if err := json.Unmarshal(h.DriverState, &s); err != nil || s.ContainerID == "" {
		return fmt.Errorf("%w: unreadable handle", drivers.ErrTaskNotFound)
	}
	if d.clientErr != nil {
		return fmt.Errorf("docker: %v", d.clientErr)
	}
	ctx, cancel := d.call()
	defer cancel()
	if _, err := d.docker.ContainerInspect(ctx, s.ContainerID); err != nil {
		if cerrdefs.IsNotFound(err) {
			return fmt.Errorf("%w: container %s is gone", drivers.ErrTaskNotFound, shortID(s.ContainerID))
		}
		return fmt.Errorf("docker: inspecting container %s: %w", shortID(s.ContainerID), err)
	}
	logs, err := openLogWriters(h.Config)
	if err != nil {
		return fmt.Errorf("docker: re-attaching to container %s: %w", shortID(s.ContainerID), err)
	}
	d.images.acquire(s.ImageID, s.Image)
	t := &task{cfg: h.Config, containerID: s.ContainerID, imageID: s.ImageID, startedAt: h.StartedAt, tty: s.TTY}
	// Output up to the previous client's cursor was copied by it; without
	// a cursor (a TTY, or no task directory), from now on.
	from, ok := readCursor(h.Config.TaskDir, s.ContainerID)
	if !ok || s.TTY {
		from = logCursor{At: d.clock.Now()}
	}
	d.track(t, from, logs)
	return nil
}

// removeContainer removes a container and its anonymous volumes, killing
// it if it still runs.
func (d *Driver) removeContainer(id string) error {
	ctx, cancel := d.call()
	defer cancel()
	err := d.docker.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return err
	}
	return nil
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

var errNoSignal = errors.New("no signal named")
