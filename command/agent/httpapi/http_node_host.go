package httpapi

import "github.com/drover-sched/drover/structs"

// nodeOut is a node as GET /v1/node/:id answers it: the node, with its
// host volumes and host networks at the top level where Nomad's API has
// them (api.Node.HostVolumes, api.Node.HostNetworks). The structs keep
// them in NodeResources so that a Node stays small.
type nodeOut struct {
	*structs.Node
	HostVolumes  map[string]*hostVolumeInfo
	HostNetworks map[string]*structs.ClientHostNetworkConfig
}

// hostVolumeInfo is Nomad's api.HostVolumeInfo.
type hostVolumeInfo struct {
	Path     string
	ReadOnly bool
}

func newNodeOut(n *structs.Node) *nodeOut {
	out := &nodeOut{Node: n, HostVolumes: map[string]*hostVolumeInfo{}, HostNetworks: map[string]*structs.ClientHostNetworkConfig{}}
	if n.NodeResources == nil {
		return out
	}
	for name, v := range n.NodeResources.HostVolumes {
		out.HostVolumes[name] = &hostVolumeInfo{Path: v.Path, ReadOnly: v.ReadOnly}
	}
	for name, hn := range n.NodeResources.HostNetworks {
		out.HostNetworks[name] = hn
	}
	return out
}
