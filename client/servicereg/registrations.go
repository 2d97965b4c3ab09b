package servicereg

import (
	"strconv"

	"github.com/drover-sched/drover/structs"
)

// nodeIPAttr is the node attribute holding its address, used when a
// service names no port or a port has no address of its own.
const nodeIPAttr = "unique.network.ip-address"

// Registrations returns the registrations alloc should have now (wanted),
// and the IDs of every registration any of its nomad services could have
// (all), which the Syncer deletes when they are not wanted. node supplies
// the node's address and datacenter.
func Registrations(alloc *structs.Allocation, node *structs.Node) (wanted []*structs.ServiceRegistration, all []string) {
	if alloc == nil || alloc.Job == nil {
		return nil, nil
	}
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil {
		return nil, nil
	}
	live := !alloc.TerminalStatus()
	for _, s := range tg.Services {
		if !isNomad(s) {
			continue
		}
		id := structs.MakeAllocServiceID(alloc.ID, "group-"+tg.Name, s)
		all = append(all, id)
		if live && alloc.ClientStatus == structs.AllocClientStatusRunning {
			if r := build(id, alloc, node, "", s); r != nil {
				wanted = append(wanted, r)
			}
		}
	}
	for _, t := range tg.Tasks {
		for _, s := range t.Services {
			if !isNomad(s) {
				continue
			}
			id := structs.MakeAllocServiceID(alloc.ID, t.Name, s)
			all = append(all, id)
			if ts := alloc.TaskStates[t.Name]; live && ts != nil && ts.State == structs.TaskStateRunning {
				if r := build(id, alloc, node, t.Name, s); r != nil {
					wanted = append(wanted, r)
				}
			}
		}
	}
	return wanted, all
}

func isNomad(s *structs.Service) bool { return s != nil && s.Provider == structs.ServiceProviderNomad }

// build makes one registration, or nil if its port label names no port of
// the alloc (the servers would refuse it; the job's author sees the
// missing service and the client logs nothing worse).
func build(id string, alloc *structs.Allocation, node *structs.Node, task string, s *structs.Service) *structs.ServiceRegistration {
	addr, port, ok := resolve(alloc, node, task, s)
	if !ok {
		return nil
	}
	tags := s.Tags
	if alloc.DeploymentStatus != nil && alloc.DeploymentStatus.Canary && len(s.CanaryTags) > 0 {
		tags = s.CanaryTags
	}
	r := &structs.ServiceRegistration{
		ID: id, ServiceName: s.Name, Namespace: alloc.Namespace, NodeID: alloc.NodeID, JobID: alloc.JobID,
		AllocID: alloc.ID, Address: addr, Port: port,
	}
	if node != nil {
		r.Datacenter = node.Datacenter
	}
	if len(tags) > 0 {
		r.Tags = append([]string(nil), tags...)
	}
	return r
}

// resolve finds a service's address and port. A port label is looked up
// in the group's ports, then in the group's and the task's network
// blocks; a number is taken as the port itself; no label advertises the
// address alone. address_mode "alloc" advertises the port inside the
// allocation (its `to`) on the alloc's own address where it has one;
// "host", "auto" and "driver" (Drover's drivers have no address of their
// own) advertise the host port. A service's `address` replaces the address
// found.
func resolve(alloc *structs.Allocation, node *structs.Node, task string, s *structs.Service) (string, int, bool) {
	nodeIP := ""
	if node != nil {
		nodeIP = node.Attributes.Value(nodeIPAttr)
	}
	addr, port := nodeIP, 0
	inAlloc := s.AddressMode == "alloc"
	switch n, err := strconv.Atoi(s.PortLabel); {
	case s.PortLabel == "":
	case err == nil:
		port = n
	default:
		ip, host, to, ok := lookupPort(alloc, task, s.PortLabel)
		if !ok {
			return "", 0, false
		}
		port = host
		if ip != "" {
			addr = ip
		}
		if inAlloc && to > 0 {
			port = to
		}
	}
	if inAlloc && alloc.NetworkStatus != nil && alloc.NetworkStatus.Address != "" {
		addr = alloc.NetworkStatus.Address
	}
	if s.Address != "" {
		addr = s.Address
	}
	return addr, port, true
}

// lookupPort returns a port label's host address, host port and port
// inside the allocation.
func lookupPort(alloc *structs.Allocation, task, label string) (ip string, host, to int, ok bool) {
	ar := alloc.AllocatedResources
	if ar == nil {
		return "", 0, 0, false
	}
	if m, found := ar.Shared.Ports.Get(label); found {
		return m.HostIP, m.Value, m.To, true
	}
	nets := ar.Shared.Networks
	if tr := ar.Tasks[task]; tr != nil {
		nets = append(append(structs.Networks(nil), nets...), tr.Networks...)
	}
	for _, n := range nets {
		for _, ports := range [][]structs.Port{n.ReservedPorts, n.DynamicPorts} {
			for _, p := range ports {
				if p.Label == label {
					return n.IP, p.Value, p.To, true
				}
			}
		}
	}
	return "", 0, 0, false
}
