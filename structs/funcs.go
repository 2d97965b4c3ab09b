package structs

import (
	"fmt"
	"math"
)

// AllocsFit reports whether allocs fit on node together: the sum of what
// every alloc that still holds resources (promise 1: not client-terminal,
// whatever its desired status) uses must be within the node's capacity less
// reservations, and no two of them may hold the same host port. It returns
// the exhausted dimension ("cpu", "memory", "disk", "network: ...") when they
// do not fit, and the resources used. The scheduler and the plan applier
// both use this function, so they can never disagree about a fit.
func AllocsFit(node *Node, allocs []*Allocation, idx *NetworkIndex) (bool, string, ComparableResources, error) {
	var used ComparableResources
	for _, a := range allocs {
		if !a.HoldsResources() {
			continue
		}
		used.Add(a.AllocatedResources.Comparable())
	}
	if ok, dim := node.Comparable().Superset(used); !ok {
		return false, dim, used, nil
	}
	if idx == nil {
		var err error
		if idx, err = NewNetworkIndex(node); err != nil {
			return false, "", used, err
		}
	}
	if collide, reason := idx.AddAllocs(allocs); collide {
		return false, "network: " + reason, used, nil
	}
	return true, "", used, nil
}

// ScoreFitBinPack scores how well util fills node, from 0 (empty) to 18
// (full), following the BestFit v3 shape: a node nearer to full on CPU and
// memory scores higher, so work packs onto fewer machines.
func ScoreFitBinPack(node *Node, util ComparableResources) float64 {
	return scoreFit(node, util, true)
}

// ScoreFitSpread is the inverse of ScoreFitBinPack: emptier nodes score
// higher, spreading work across machines.
func ScoreFitSpread(node *Node, util ComparableResources) float64 {
	return scoreFit(node, util, false)
}

func scoreFit(node *Node, util ComparableResources, binpack bool) float64 {
	avail := node.Comparable()
	if avail.CPU <= 0 || avail.MemoryMB <= 0 {
		return 0
	}
	freeCPU := 1 - float64(util.CPU)/float64(avail.CPU)
	freeMem := 1 - float64(util.MemoryMB)/float64(avail.MemoryMB)
	total := math.Pow(10, freeCPU) + math.Pow(10, freeMem)
	score := 20.0 - total
	if !binpack {
		score = total - 2
	}
	if score > 18 {
		score = 18
	} else if score < 0 {
		score = 0
	}
	return score
}

// TaskGroupAsk sums what one allocation of tg asks for.
func TaskGroupAsk(tg *TaskGroup) ComparableResources {
	var c ComparableResources
	for _, t := range tg.Tasks {
		if t.Resources == nil {
			continue
		}
		c.CPU += int64(t.Resources.CPU)
		c.MemoryMB += int64(t.Resources.MemoryMB)
		mx := t.Resources.MemoryMaxMB
		if mx < t.Resources.MemoryMB {
			mx = t.Resources.MemoryMB
		}
		c.MemoryMaxMB += int64(mx)
	}
	if tg.EphemeralDisk != nil {
		c.DiskMB = int64(tg.EphemeralDisk.SizeMB)
	}
	return c
}

// AllocatedResourcesFor builds the grant for one allocation of tg, with the
// ports already chosen for the group network.
func AllocatedResourcesFor(tg *TaskGroup, ports AllocatedPorts) *AllocatedResources {
	ar := &AllocatedResources{Tasks: make(map[string]*AllocatedTaskResources, len(tg.Tasks))}
	for _, t := range tg.Tasks {
		r := t.Resources
		if r == nil {
			r = &Resources{}
		}
		mx := r.MemoryMaxMB
		ar.Tasks[t.Name] = &AllocatedTaskResources{
			Cpu:    AllocatedCpuResources{CpuShares: int64(r.CPU)},
			Memory: AllocatedMemoryResources{MemoryMB: int64(r.MemoryMB), MemoryMaxMB: int64(mx)},
		}
	}
	if tg.EphemeralDisk != nil {
		ar.Shared.DiskMB = int64(tg.EphemeralDisk.SizeMB)
	}
	ar.Shared.Ports = ports
	if len(tg.Networks) > 0 {
		n := tg.Networks[0].Copy()
		for i := range n.ReservedPorts {
			if m, ok := ports.Get(n.ReservedPorts[i].Label); ok {
				n.IP = m.HostIP
			}
		}
		for i := range n.DynamicPorts {
			if m, ok := ports.Get(n.DynamicPorts[i].Label); ok {
				n.DynamicPorts[i].Value = m.Value
				n.DynamicPorts[i].To = m.To
				n.IP = m.HostIP
			}
		}
		ar.Shared.Networks = Networks{n}
	}
	return ar
}

// GroupNetworkAsk merges the group network and any legacy task networks
// into one ask, so ports are chosen once for the whole allocation.
func GroupNetworkAsk(tg *TaskGroup) (*NetworkResource, error) {
	ask := &NetworkResource{Mode: "host"}
	seen := map[string]bool{}
	add := func(n *NetworkResource) error {
		for _, p := range n.ReservedPorts {
			if seen[p.Label] {
				return fmt.Errorf("port label %q is defined twice", p.Label)
			}
			seen[p.Label] = true
			ask.ReservedPorts = append(ask.ReservedPorts, p)
		}
		for _, p := range n.DynamicPorts {
			if seen[p.Label] {
				return fmt.Errorf("port label %q is defined twice", p.Label)
			}
			seen[p.Label] = true
			ask.DynamicPorts = append(ask.DynamicPorts, p)
		}
		return nil
	}
	for _, n := range tg.Networks {
		if n.Mode != "" {
			ask.Mode = n.Mode
		}
		if err := add(n); err != nil {
			return nil, err
		}
	}
	for _, t := range tg.Tasks {
		if t.Resources == nil {
			continue
		}
		for _, n := range t.Resources.Networks {
			if err := add(n); err != nil {
				return nil, err
			}
		}
	}
	return ask, nil
}
