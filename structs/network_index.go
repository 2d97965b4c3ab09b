package structs

import (
	"fmt"
	"math/rand"
)

// NetworkIndex tracks which host ports of one node are taken, so that the
// scheduler can pick free dynamic ports and the plan applier can detect two
// allocations claiming the same port. Drover models one port space per node
// (the node's advertised address).
type NetworkIndex struct {
	HostIP  string
	MinPort int
	MaxPort int
	used    map[int]string // port -> owner (alloc ID or "reserved")
	// networks are the node's named host networks (network_host.go).
	networks hostNetworks
}

// NewNetworkIndex builds the index for a node: its reserved host ports are
// taken from the start.
func NewNetworkIndex(node *Node) (*NetworkIndex, error) {
	idx := &NetworkIndex{
		HostIP:  node.Attributes.Value("unique.network.ip-address"),
		MinPort: DefaultMinDynamicPort,
		MaxPort: DefaultMaxDynamicPort,
		used:    map[int]string{},
	}
	if r := node.NodeResources; r != nil {
		if r.MinDynamicPort > 0 {
			idx.MinPort = r.MinDynamicPort
		}
		if r.MaxDynamicPort > 0 {
			idx.MaxPort = r.MaxDynamicPort
		}
	}
	if node.ReservedResources != nil {
		ports, err := ParsePortRanges(node.ReservedResources.Networks.ReservedHostPorts)
		if err != nil {
			return nil, fmt.Errorf("node %s reserved ports: %w", ShortID(node.ID), err)
		}
		for _, p := range ports {
			idx.used[p] = "reserved"
		}
	}
	nets, err := newHostNetworks(node)
	if err != nil {
		return nil, err
	}
	idx.networks = nets
	return idx, nil
}

// Used reports whether port is taken.
func (idx *NetworkIndex) Used(port int) bool {
	_, ok := idx.used[port]
	return ok
}

// UsedCount returns how many ports are taken.
func (idx *NetworkIndex) UsedCount() int { return len(idx.used) }

// AllocPorts returns every host port an allocation holds.
func AllocPorts(a *Allocation) []int {
	if a.AllocatedResources == nil {
		return nil
	}
	var out []int
	for _, p := range a.AllocatedResources.Shared.Ports {
		out = append(out, p.Value)
	}
	for _, n := range a.AllocatedResources.Shared.Networks {
		for _, p := range n.ReservedPorts {
			out = append(out, p.Value)
		}
		for _, p := range n.DynamicPorts {
			out = append(out, p.Value)
		}
	}
	for _, t := range a.AllocatedResources.Tasks {
		for _, n := range t.Networks {
			for _, p := range n.ReservedPorts {
				out = append(out, p.Value)
			}
			for _, p := range n.DynamicPorts {
				out = append(out, p.Value)
			}
		}
	}
	return dedupInts(out)
}

func dedupInts(in []int) []int {
	if len(in) < 2 {
		return in
	}
	seen := make(map[int]struct{}, len(in))
	out := in[:0]
	for _, v := range in {
		if _, ok := seen[v]; !ok && v != 0 {
			seen[v] = struct{}{}
			out = append(out, v)
		}
	}
	return out
}

// AddAllocs marks the ports of every alloc that still holds its resources
// (promise 1). It returns a description of the first collision found; the
// index still records every port.
func (idx *NetworkIndex) AddAllocs(allocs []*Allocation) (collide bool, reason string) {
	for _, a := range allocs {
		if !a.HoldsResources() {
			continue
		}
		for _, p := range AllocPorts(a) {
			if owner, taken := idx.used[p]; taken && owner != a.ID {
				if !collide {
					collide = true
					reason = fmt.Sprintf("port %d is used by both %s and %s", p, ShortID(owner), ShortID(a.ID))
				}
				continue
			}
			idx.used[p] = a.ID
		}
	}
	return collide, reason
}

// AssignPorts chooses host ports for a group network ask: static ports as
// given (failing if taken) and dynamic ports at random from the node's
// dynamic range. The chosen ports are marked used. rng must be the
// scheduler's seeded source so that decisions are reproducible.
func (idx *NetworkIndex) AssignPorts(ask *NetworkResource, owner string, rng *rand.Rand) (AllocatedPorts, error) {
	var out AllocatedPorts
	taken := map[int]bool{}
	for _, p := range ask.ReservedPorts {
		ip, err := idx.hostIP(p.Label, p.HostNetwork)
		if err != nil {
			return nil, err
		}
		if idx.Used(p.Value) || taken[p.Value] || idx.reservedOn(p.HostNetwork, p.Value) {
			return nil, &ReservedPortCollisionError{Label: p.Label, Port: p.Value}
		}
		taken[p.Value] = true
		out = append(out, AllocatedPortMapping{Label: p.Label, Value: p.Value, To: p.To, HostIP: ip})
	}
	span := idx.MaxPort - idx.MinPort + 1
	for _, p := range ask.DynamicPorts {
		ip, err := idx.hostIP(p.Label, p.HostNetwork)
		if err != nil {
			return nil, err
		}
		free := func(cand int) bool {
			return !idx.Used(cand) && !taken[cand] && !idx.reservedOn(p.HostNetwork, cand)
		}
		port := 0
		// Random probes first (cheap when the range is mostly free), then
		// a linear scan so a nearly full range still finds the last port.
		for try := 0; try < 20 && span > 0; try++ {
			cand := idx.MinPort + rng.Intn(span)
			if free(cand) {
				port = cand
				break
			}
		}
		if port == 0 {
			for cand := idx.MinPort; cand <= idx.MaxPort; cand++ {
				if free(cand) {
					port = cand
					break
				}
			}
		}
		if port == 0 {
			return nil, &DynamicPortsExhaustedError{MinPort: idx.MinPort, MaxPort: idx.MaxPort}
		}
		taken[port] = true
		to := p.To
		if to == -1 {
			to = port
		}
		out = append(out, AllocatedPortMapping{Label: p.Label, Value: port, To: to, HostIP: ip})
	}
	for _, m := range out {
		idx.used[m.Value] = owner
	}
	return out, nil
}

// Release frees ports held by owner (used when a candidate placement is
// discarded).
func (idx *NetworkIndex) Release(ports AllocatedPorts) {
	for _, p := range ports {
		delete(idx.used, p.Value)
	}
}
