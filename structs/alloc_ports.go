package structs

import "slices"

// GroupPorts are the ports granted to the group: the shared ports, then
// the labelled ports of the group network that they do not list.
func (s AllocatedSharedResources) GroupPorts() []AllocatedPortMapping {
	return AppendNetworkPorts(append([]AllocatedPortMapping(nil), s.Ports...), s.Networks)
}

// AppendNetworkPorts adds the labelled ports of network blocks, with the
// network's IP as their host IP, as the drivers that publish ports and
// the client's port mappings see them. A label already in out (the
// alloc's shared ports list the group network's ports again) is not
// added twice.
func AppendNetworkPorts(out []AllocatedPortMapping, nets Networks) []AllocatedPortMapping {
	for _, n := range nets {
		for _, ports := range [][]Port{n.ReservedPorts, n.DynamicPorts} {
			for _, p := range ports {
				if p.Label != "" && !slices.ContainsFunc(out, func(m AllocatedPortMapping) bool { return m.Label == p.Label }) {
					out = append(out, AllocatedPortMapping{Label: p.Label, Value: p.Value, To: p.To, HostIP: n.IP})
				}
			}
		}
	}
	return out
}
