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
	// names caches, for one allocation name, each ask's node volume name
	// and the reasons a node is refused for it: a Select may check
	// thousands of nodes, and without the cache each would format them.
	names *volumeNames
}

// volumeNames are the node volume names and refusal reasons of the asks
// for the allocation named alloc.
type volumeNames struct {
	alloc    string
	built    bool
	sources  []string
	missing  []string
	readOnly []string
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
	static.names, perAlloc.names = &volumeNames{}, &volumeNames{}
	return static, perAlloc, len(static.asks) > 0, len(perAlloc.asks) > 0
}

// resolve returns the names for the current allocation, building them
// when it changed.
func (c hostVolumeChecker) resolve() *volumeNames {
	alloc := ""
	if c.allocName != nil {
		alloc = *c.allocName
	}
	n := c.names
	if n.built && n.alloc == alloc {
		return n
	}
	*n = volumeNames{alloc: alloc, built: true}
	for _, req := range c.asks {
		source := structs.HostVolumeSource(req, alloc)
		n.sources = append(n.sources, source)
		n.missing = append(n.missing, fmt.Sprintf("missing host volume %q", source))
		n.readOnly = append(n.readOnly, fmt.Sprintf("host volume %q is read-only on the node (the group's volume %q needs read_only = true to use it)", source, req.Name))
	}
	return n
}

func (c hostVolumeChecker) check(node *structs.Node) string {
	var have map[string]*structs.ClientHostVolumeConfig
	if node.NodeResources != nil {
		have = node.NodeResources.HostVolumes
	}
	n := c.resolve()
	for i, req := range c.asks {
		v, ok := have[n.sources[i]]
		if !ok {
			return n.missing[i]
		}
		if v.ReadOnly && !req.ReadOnly {
			return n.readOnly[i]
		}
	}
	return ""
}
