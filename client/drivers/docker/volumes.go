package docker

import (
	"fmt"

	"github.com/docker/docker/api/types/mount"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/structs"
)

// propagation is the bind propagation docker gives each volume_mount
// propagation_mode, as Nomad maps them.
var propagation = map[string]mount.Propagation{
	"":                                       mount.PropagationRPrivate,
	structs.VolumeMountPropagationPrivate:    mount.PropagationRPrivate,
	structs.VolumeMountPropagationHostToTask: mount.PropagationRSlave,
	structs.VolumeMountPropagationBidirectional: mount.PropagationRShared,
}

// volumeMounts are the task's host volumes as bind mounts. They need no
// volumes { enabled = true }: the operator named these paths in the
// client's host_volume blocks, and the job only chose among them.
func volumeMounts(cfg *drivers.TaskConfig) ([]mount.Mount, error) {
	out := make([]mount.Mount, 0, len(cfg.Mounts))
	for _, m := range cfg.Mounts {
		p, ok := propagation[m.PropagationMode]
		if !ok {
			return nil, fmt.Errorf("docker: volume_mount at %s: propagation_mode %q must be private, host-to-task or bidirectional", m.TaskPath, m.PropagationMode)
		}
		out = append(out, mount.Mount{
			Type: mount.TypeBind, Source: m.HostPath, Target: m.TaskPath, ReadOnly: m.Readonly,
			BindOptions: &mount.BindOptions{Propagation: p},
		})
	}
	return out, nil
}
