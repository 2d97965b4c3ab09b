package structs

import "fmt"

// DefaultHostNetwork is the host_network a port without one binds on: the
// node's advertised address.
const DefaultHostNetwork = "default"

// HostNetworkMissingError is AssignPorts asked for a port on a
// host_network the node does not have. The scheduler's feasibility chain
// filters such nodes first (hostNetworkChecker); this catches a plan
// applier or a stale snapshot that did not.
type HostNetworkMissingError struct {
	Label, Network string
}

func (e *HostNetworkMissingError) Error() string {
	return fmt.Sprintf("port %q: node has no host_network %q", e.Label, e.Network)
}

// hostNetworks is the address of each named host network of a node (the
// NodeNetworks addresses by alias) and the ports each one reserves.
// Drover keeps one port space per node: a port taken on one address is
// taken on all of them, which can refuse a placement Nomad would make
// (the same port on two networks) but never lets two allocations collide.
type hostNetworks struct {
	addr     map[string]string
	reserved map[string]map[int]bool
}

// newHostNetworks reads a node's named networks. The "default" alias is
// the node's advertised address, whose reserved ports the node's reserved
// block already holds.
func newHostNetworks(node *Node) (hostNetworks, error) {
	h := hostNetworks{}
	if node.NodeResources == nil {
		return h, nil
	}
	for _, nn := range node.NodeResources.NodeNetworks {
		for _, a := range nn.Addresses {
			if a.Alias == "" || a.Alias == DefaultHostNetwork {
				continue
			}
			if h.addr == nil {
				h.addr, h.reserved = map[string]string{}, map[string]map[int]bool{}
			}
			if _, dup := h.addr[a.Alias]; dup {
				continue
			}
			h.addr[a.Alias] = a.Address
			ports, err := ParsePortRanges(a.ReservedPorts)
			if err != nil {
				return h, fmt.Errorf("node %s host_network %q reserved ports: %w", ShortID(node.ID), a.Alias, err)
			}
			for _, p := range ports {
				if h.reserved[a.Alias] == nil {
					h.reserved[a.Alias] = map[int]bool{}
				}
				h.reserved[a.Alias][p] = true
			}
		}
	}
	return h, nil
}

// NodeHasHostNetwork reports whether node has the named host network
// ("" and "default" are the address every node has).
func NodeHasHostNetwork(node *Node, name string) bool {
	if name == "" || name == DefaultHostNetwork {
		return true
	}
	if node.NodeResources == nil {
		return false
	}
	for _, nn := range node.NodeResources.NodeNetworks {
		for _, a := range nn.Addresses {
			if a.Alias == name {
				return true
			}
		}
	}
	return false
}

// hostIP is the address a port on host network name binds to.
func (idx *NetworkIndex) hostIP(label, name string) (string, error) {
	if name == "" || name == DefaultHostNetwork {
		return idx.HostIP, nil
	}
	if ip, ok := idx.networks.addr[name]; ok {
		return ip, nil
	}
	return "", &HostNetworkMissingError{Label: label, Network: name}
}

// reservedOn reports whether port is reserved on host network name.
func (idx *NetworkIndex) reservedOn(name string, port int) bool {
	return idx.networks.reserved[name][port]
}
