package docker

import (
	"fmt"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"

	"github.com/drover-sched/drover/client/drivers"
)

// joinOwnAlloc checks each "container:<name or id>" mode of hc
// (network_mode, pid_mode, ipc_mode): joining another container's
// namespaces is how tasks of one alloc share them, so the container must
// be one Drover started for the same alloc. Another alloc's container may
// be another job's, whose network and processes the task must not reach.
// The mode is rewritten to the container's ID, so a container renamed or
// replaced after the check is not the one joined.
func (d *Driver) joinOwnAlloc(cfg *drivers.TaskConfig, hc *container.HostConfig) error {
	modes := []struct {
		key string
		get func() string
		set func(string)
	}{
		{"network_mode", func() string { return string(hc.NetworkMode) }, func(v string) { hc.NetworkMode = container.NetworkMode(v) }},
		{"pid_mode", func() string { return string(hc.PidMode) }, func(v string) { hc.PidMode = container.PidMode(v) }},
		{"ipc_mode", func() string { return string(hc.IpcMode) }, func(v string) { hc.IpcMode = container.IpcMode(v) }},
	}
	for _, m := range modes {
		mode := m.get()
		target, ok := strings.CutPrefix(mode, "container:")
		if !ok {
			continue
		}
		ctx, cancel := d.call()
		info, err := d.docker.ContainerInspect(ctx, target)
		cancel()
		switch {
		case cerrdefs.IsNotFound(err):
			return fmt.Errorf("docker config: %s %q: there is no such container (it must be a running task of the same alloc)", m.key, mode)
		case err != nil:
			return &drivers.RecoverableError{Err: fmt.Errorf("docker: inspecting the container of %s %q: %w", m.key, mode, err)}
		}
		if info.Config == nil || info.Config.Labels[LabelAllocID] != cfg.AllocID {
			return fmt.Errorf("docker config: %s %q is not allowed: that container is not a task of this alloc (only containers of the same alloc may be joined)", m.key, mode)
		}
		m.set("container:" + info.ID)
	}
	return nil
}
