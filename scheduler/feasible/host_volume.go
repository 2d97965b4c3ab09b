package feasible

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
)

// hostVolumeChecker refuses a node that lacks one of the group's host
// volumes, or has it read-only where the group would write (the request
// is not read_only). Without per_alloc the verdict depends on the node
// alone and the checker is static; per_alloc volumes are named after the
// allocation being placed ("data[2]"), so their checker reads the name of
// the current placement and runs after the static part of the chain.
type hostVolumeChecker struct {
	asks []*structs.VolumeRequest
	// allocName is the placement being checked, set by Select, for
	// per_alloc requests; nil for the static checker.
	allocName *string
}

// newHostVolumeCheckers splits the group's host volume requests into the
// static checker and the per-allocation one; ok is false for either when
// it has nothing to check.
func newHostVolumeCheckers(tg *structs.TaskGroup, allocName *string) (static, perAlloc hostVolumeChecker, okStatic, okPerAlloc bool) {
	for _, req := range structs.HostVolumeRequests(tg) {
		if req.PerAlloc {
			perAlloc.asks = append(perAlloc.asks, req)
		} else {
			static.asks = append(static.asks, req)
		}
	}
	perAlloc.allocName = allocName
	return static, perAlloc, len(static.asks) > 0, len(perAlloc.asks) > 0
}

func (c hostVolumeChecker) check(node *structs.Node) string {
	var have map[string]*structs.ClientHostVolumeConfig
	if node.NodeResources != nil {
		have = node.NodeResources.HostVolumes
	}
	name := ""
	if c.allocName != nil {
		name = *c.allocName
	}
	for _, req := range c.asks {
		source := structs.HostVolumeSource(req, name)
		v, ok := have[source]
		if !ok {
			return fmt.Sprintf("missing host volume %q", source)
		}
		if v.ReadOnly && !req.ReadOnly {
			return fmt.Sprintf("host volume %q is read-only on the node (the group's volume %q needs read_only = true to use it)", source, req.Name)
		}
	}
	return ""
}
