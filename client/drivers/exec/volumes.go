package exec

import (
	"fmt"
	"path/filepath"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/exec/execinit"
	"github.com/drover-sched/drover/structs"
)

// checkVolumeMounts refuses the mounts the exec driver cannot give as
// asked. The task's mount namespace is made private before anything is
// bound into its root (execinit), so nothing the host mounts later can
// reach the task and nothing the task mounts can reach the host: a
// host-to-task or bidirectional mount would silently be private.
func checkVolumeMounts(cfg *drivers.TaskConfig) error {
	for _, m := range cfg.Mounts {
		if m.PropagationMode != "" && m.PropagationMode != structs.VolumeMountPropagationPrivate {
			return fmt.Errorf("exec: volume_mount at %s: propagation_mode %q is not supported by exec (only \"private\"); use the docker driver or private", m.TaskPath, m.PropagationMode)
		}
		if !filepath.IsAbs(m.TaskPath) || filepath.Clean(m.TaskPath) == "/" {
			return fmt.Errorf("exec: volume_mount destination %q must be an absolute path below /", m.TaskPath)
		}
	}
	return nil
}

// volumeBinds are the task's host volumes as the init's bind mounts:
// nosuid and nodev like every bind into the root, read-only where the
// host volume, the group or the task says so.
func volumeBinds(cfg *drivers.TaskConfig) []execinit.Mount {
	out := make([]execinit.Mount, 0, len(cfg.Mounts))
	for _, m := range cfg.Mounts {
		out = append(out, execinit.Mount{Kind: execinit.MountBind, Source: m.HostPath, Target: filepath.Clean(m.TaskPath), ReadOnly: m.Readonly})
	}
	return out
}
