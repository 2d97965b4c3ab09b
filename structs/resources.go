package structs

// Resources is what a task asks for, in the shape of a jobspec `resources`
// block: CPU in MHz, memory and disk in MB, and networks (deprecated at task
// level in favour of the group `network` block, but still accepted).
type Resources struct {
	CPU         int
	Cores       int
	MemoryMB    int
	MemoryMaxMB int
	DiskMB      int
	IOPS        int
	Networks    Networks
	// Devices are `device` requests, kept as data: Drover does not
	// fingerprint or schedule devices.
	Devices []*RequestedDevice
}

// RequestedDevice is a `device` block of a task's resources.
type RequestedDevice struct {
	Name        string
	Count       uint64
	Constraints []*Constraint
	Affinities  []*Affinity
}

// Defaults used when a task leaves a resources field unset.
const (
	DefaultCPU      = 100
	DefaultMemoryMB = 300
	DefaultDiskMB   = 300
)

// Canonicalize fills unset fields with defaults.
func (r *Resources) Canonicalize() {
	if r.CPU == 0 && r.Cores == 0 {
		r.CPU = DefaultCPU
	}
	if r.MemoryMB == 0 {
		r.MemoryMB = DefaultMemoryMB
	}
	for _, n := range r.Networks {
		n.Canonicalize()
	}
}

// Copy returns a deep copy.
func (r *Resources) Copy() *Resources {
	if r == nil {
		return nil
	}
	c := *r
	c.Networks = r.Networks.Copy()
	if r.Devices != nil {
		c.Devices = make([]*RequestedDevice, len(r.Devices))
		for i, d := range r.Devices {
			dc := *d
			dc.Constraints = copyEach(d.Constraints)
			dc.Affinities = copyEach(d.Affinities)
			c.Devices[i] = &dc
		}
	}
	return &c
}

func (r *Resources) validate(p problems) {
	if r.CPU < 0 {
		p.add("resources.cpu must be >= 0, got %d", r.CPU)
	}
	if r.CPU == 0 && r.Cores == 0 {
		p.add("resources.cpu must be > 0 (MHz) unless cores is set")
	}
	if r.MemoryMB <= 0 {
		p.add("resources.memory must be > 0 (MB), got %d", r.MemoryMB)
	}
	if r.MemoryMaxMB != 0 && r.MemoryMaxMB < r.MemoryMB {
		p.add("resources.memory_max (%d) must be >= memory (%d)", r.MemoryMaxMB, r.MemoryMB)
	}
	if r.DiskMB < 0 {
		p.add("resources.disk must be >= 0, got %d", r.DiskMB)
	}
	validateEach(p, "network", r.Networks)
}

// NodeResources is what a node offers, as fingerprinted by its client.
type NodeResources struct {
	Cpu            NodeCpuResources
	Memory         NodeMemoryResources
	Disk           NodeDiskResources
	Networks       Networks
	NodeNetworks   []*NodeNetworkResource
	MinDynamicPort int
	MaxDynamicPort int
	// HostVolumes and HostNetworks are the client's host_volume and
	// host_network blocks by name (host_volume.go). They live here rather
	// than on Node, where Nomad keeps them, so that a Node stays in its
	// size class; the HTTP API shows them on the node as Nomad does.
	HostVolumes  map[string]*ClientHostVolumeConfig
	HostNetworks map[string]*ClientHostNetworkConfig
}

// NodeCpuResources is the node's compute capacity. CpuShares is total MHz.
type NodeCpuResources struct {
	CpuShares          int64
	TotalCpuCores      uint16
	ReservableCpuCores []uint16
}

// NodeMemoryResources is the node's memory in MB.
type NodeMemoryResources struct{ MemoryMB int64 }

// NodeDiskResources is the node's allocatable disk in MB.
type NodeDiskResources struct{ DiskMB int64 }

// NodeNetworkResource describes one host interface.
type NodeNetworkResource struct {
	Mode       string
	Device     string
	MacAddress string
	Speed      int
	Addresses  []NodeNetworkAddress
}

// NodeNetworkAddress is one address on a host interface.
type NodeNetworkAddress struct {
	Family        string
	Alias         string
	Address       string
	ReservedPorts string
	Gateway       string
}

// Copy returns a deep copy.
func (n *NodeResources) Copy() *NodeResources {
	if n == nil {
		return nil
	}
	c := *n
	c.Cpu.ReservableCpuCores = append([]uint16(nil), n.Cpu.ReservableCpuCores...)
	c.Networks = n.Networks.Copy()
	c.NodeNetworks = make([]*NodeNetworkResource, len(n.NodeNetworks))
	for i, nn := range n.NodeNetworks {
		cp := *nn
		cp.Addresses = append([]NodeNetworkAddress(nil), nn.Addresses...)
		c.NodeNetworks[i] = &cp
	}
	c.HostVolumes = copyBlocks(n.HostVolumes)
	c.HostNetworks = copyBlocks(n.HostNetworks)
	return &c
}

// Comparable returns the node's capacity in the form fit checks use.
func (n *NodeResources) Comparable() ComparableResources {
	if n == nil {
		return ComparableResources{}
	}
	return ComparableResources{CPU: n.Cpu.CpuShares, MemoryMB: n.Memory.MemoryMB, DiskMB: n.Disk.DiskMB}
}

// NodeReservedResources is capacity the operator keeps away from Drover.
type NodeReservedResources struct {
	Cpu      NodeReservedCpuResources
	Memory   NodeReservedMemoryResources
	Disk     NodeReservedDiskResources
	Networks NodeReservedNetworkResources
}

// NodeReservedCpuResources is reserved compute in MHz.
type NodeReservedCpuResources struct {
	CpuShares        int64
	ReservedCpuCores []uint16
}

// NodeReservedMemoryResources is reserved memory in MB.
type NodeReservedMemoryResources struct{ MemoryMB int64 }

// NodeReservedDiskResources is reserved disk in MB.
type NodeReservedDiskResources struct{ DiskMB int64 }

// NodeReservedNetworkResources lists host ports no allocation may use, as a
// port spec such as "22,80,8000-8100".
type NodeReservedNetworkResources struct{ ReservedHostPorts string }

// Copy returns a deep copy.
func (n *NodeReservedResources) Copy() *NodeReservedResources {
	if n == nil {
		return nil
	}
	c := *n
	c.Cpu.ReservedCpuCores = append([]uint16(nil), n.Cpu.ReservedCpuCores...)
	return &c
}

// Comparable returns the reserved amounts in the form fit checks use.
func (n *NodeReservedResources) Comparable() ComparableResources {
	if n == nil {
		return ComparableResources{}
	}
	return ComparableResources{CPU: n.Cpu.CpuShares, MemoryMB: n.Memory.MemoryMB, DiskMB: n.Disk.DiskMB}
}

// AllocatedResources is what the scheduler granted an allocation: per-task
// compute and memory, and group-wide disk, networks and ports.
type AllocatedResources struct {
	Tasks  map[string]*AllocatedTaskResources
	Shared AllocatedSharedResources
}

// AllocatedTaskResources is one task's grant.
type AllocatedTaskResources struct {
	Cpu      AllocatedCpuResources
	Memory   AllocatedMemoryResources
	Networks Networks
}

// AllocatedCpuResources is granted compute in MHz.
type AllocatedCpuResources struct {
	CpuShares     int64
	ReservedCores []uint16
}

// AllocatedMemoryResources is granted memory in MB.
type AllocatedMemoryResources struct {
	MemoryMB    int64
	MemoryMaxMB int64
}

// AllocatedSharedResources is the group-wide part of a grant.
type AllocatedSharedResources struct {
	Networks Networks
	DiskMB   int64
	Ports    AllocatedPorts
}

// AllocatedPorts are the host ports granted to a group `network` block.
type AllocatedPorts []AllocatedPortMapping

// AllocatedPortMapping is one granted port: the host port Value, the port
// inside the task To (0 means the same), and the address it is bound on.
type AllocatedPortMapping struct {
	Label  string
	Value  int
	To     int
	HostIP string
}

// Get returns the mapping with the label.
func (p AllocatedPorts) Get(label string) (AllocatedPortMapping, bool) {
	for _, m := range p {
		if m.Label == label {
			return m, true
		}
	}
	return AllocatedPortMapping{}, false
}

// Copy returns a deep copy.
func (a *AllocatedResources) Copy() *AllocatedResources {
	if a == nil {
		return nil
	}
	c := &AllocatedResources{Tasks: make(map[string]*AllocatedTaskResources, len(a.Tasks))}
	for name, t := range a.Tasks {
		tc := *t
		tc.Cpu.ReservedCores = append([]uint16(nil), t.Cpu.ReservedCores...)
		tc.Networks = t.Networks.Copy()
		c.Tasks[name] = &tc
	}
	c.Shared = a.Shared
	c.Shared.Networks = a.Shared.Networks.Copy()
	c.Shared.Ports = append(AllocatedPorts(nil), a.Shared.Ports...)
	return c
}

// Comparable sums the grant into the form fit checks use.
func (a *AllocatedResources) Comparable() ComparableResources {
	if a == nil {
		return ComparableResources{}
	}
	c := ComparableResources{DiskMB: a.Shared.DiskMB}
	for _, t := range a.Tasks {
		c.CPU += t.Cpu.CpuShares
		c.MemoryMB += t.Memory.MemoryMB
		max := t.Memory.MemoryMaxMB
		if max < t.Memory.MemoryMB {
			max = t.Memory.MemoryMB
		}
		c.MemoryMaxMB += max
	}
	return c
}

// ComparableResources is the flat sum used to test whether allocations fit
// on a node. It is never stored or sent.
type ComparableResources struct {
	CPU         int64
	MemoryMB    int64
	MemoryMaxMB int64
	DiskMB      int64
}

// Add adds o to c.
func (c *ComparableResources) Add(o ComparableResources) {
	c.CPU += o.CPU
	c.MemoryMB += o.MemoryMB
	c.MemoryMaxMB += o.MemoryMaxMB
	c.DiskMB += o.DiskMB
}

// Subtract removes o from c.
func (c *ComparableResources) Subtract(o ComparableResources) {
	c.CPU -= o.CPU
	c.MemoryMB -= o.MemoryMB
	c.MemoryMaxMB -= o.MemoryMaxMB
	c.DiskMB -= o.DiskMB
}

// Superset reports whether c covers o in every dimension; if not it names the
// first exhausted dimension ("cpu", "memory", "disk"), the word placement
// metrics and CLI messages use.
func (c ComparableResources) Superset(o ComparableResources) (bool, string) {
	switch {
	case c.CPU < o.CPU:
		return false, "cpu"
	case c.MemoryMB < o.MemoryMB:
		return false, "memory"
	case c.DiskMB < o.DiskMB:
		return false, "disk"
	}
	return true, ""
}
