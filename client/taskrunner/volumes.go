package taskrunner

import (
	"fmt"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/structs"
)

// volumeMounts resolves the task's volume_mount blocks against the
// group's volume blocks and this node's host volumes. The scheduler
// placed the allocation only where every volume exists; a client whose
// config lost one since (a restart with another config) refuses to start
// the task rather than run it without its data.
func volumeMounts(node *structs.Node, alloc *structs.Allocation, task *structs.Task) ([]drivers.MountConfig, error) {
	if len(task.VolumeMounts) == 0 {
		return nil, nil
	}
	var tg *structs.TaskGroup
	if alloc.Job != nil {
		tg = alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	}
	var have map[string]*structs.ClientHostVolumeConfig
	if node != nil && node.NodeResources != nil {
		have = node.NodeResources.HostVolumes
	}
	out := make([]drivers.MountConfig, 0, len(task.VolumeMounts))
	for _, vm := range task.VolumeMounts {
		var req *structs.VolumeRequest
		if tg != nil {
			req = tg.Volumes[vm.Volume]
		}
		if req == nil {
			return nil, fmt.Errorf("volume_mount: volume %q is not declared in group %q", vm.Volume, alloc.TaskGroup)
		}
		if req.Type != structs.VolumeTypeHost {
			return nil, fmt.Errorf("volume %q: type %q is not supported (host volumes only)", vm.Volume, req.Type)
		}
		source := structs.HostVolumeSource(req, alloc.Name)
		hv, ok := have[source]
		if !ok {
			return nil, fmt.Errorf("volume %q: this client has no host_volume %q", vm.Volume, source)
		}
		mode := vm.PropagationMode
		if mode == "" {
			mode = structs.VolumeMountPropagationPrivate
		}
		out = append(out, drivers.MountConfig{
			TaskPath:        vm.Destination,
			HostPath:        hv.Path,
			Readonly:        hv.ReadOnly || req.ReadOnly || vm.ReadOnly,
			PropagationMode: mode,
		})
	}
	return out, nil
}
