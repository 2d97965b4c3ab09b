package fingerprint

import (
	"fmt"
	"os"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/structs"
)

// hostVolumeFingerprinter puts the client's host_volume blocks on the
// node, so the scheduler places a group only where its volumes are. A
// volume whose path does not exist stops the client: a node advertising
// it would take work that then fails to mount (or, worse, mounts an empty
// directory the client made).
type hostVolumeFingerprinter struct {
	stat func(string) (os.FileInfo, error)
}

func (f hostVolumeFingerprinter) Fingerprint(cfg *config.Config, node *Target) error {
	if len(cfg.HostVolumes) == 0 {
		return nil
	}
	out := make(map[string]*structs.ClientHostVolumeConfig, len(cfg.HostVolumes))
	for name, v := range cfg.HostVolumes {
		if _, err := f.stat(v.Path); err != nil {
			return fmt.Errorf("client host_volume %q: path %s: %w (create it, or remove the block)", name, v.Path, err)
		}
		c := v.Copy()
		c.Name = name
		out[name] = c
	}
	node.NodeResources.HostVolumes = out
	return nil
}
