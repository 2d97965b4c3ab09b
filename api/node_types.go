package api

import "time"

// Node statuses.
const (
	NodeStatusInit         = "initializing"
	NodeStatusReady        = "ready"
	NodeStatusDown         = "down"
	NodeStatusDisconnected = "disconnected"
)

// Node scheduling eligibility.
const (
	NodeSchedulingEligible   = "eligible"
	NodeSchedulingIneligible = "ineligible"
)

// Node is one machine running a client (GET /v1/node/:id).
type Node struct {
	ID                    string
	Datacenter            string
	Name                  string
	HTTPAddr              string
	TLSEnabled            bool
	Attributes            map[string]string
	NodeResources         *NodeResources
	ReservedResources     *NodeReservedResources
	Links                 map[string]string
	Meta                  map[string]string
	NodeClass             string
	NodePool              string
	ComputedClass         string
	DrainStrategy         *DrainStrategy
	Drain                 bool
	SchedulingEligibility string
	Status                string
	StatusDescription     string
	StatusUpdatedAt       int64
	Events                []*NodeEvent
	Drivers               map[string]*DriverInfo
	LastDrain             *DrainMetadata
	// HostVolumes and HostNetworks are the client's host_volume and
	// host_network blocks by name.
	HostVolumes  map[string]*HostVolumeInfo
	HostNetworks map[string]*HostNetworkInfo
	CreateIndex  uint64
	ModifyIndex  uint64
}

// HostVolumeInfo is one host volume a node offers.
type HostVolumeInfo struct {
	Path     string
	ReadOnly bool
}

// HostNetworkInfo is one host network a node's config declares; its
// address, when the node has one, is in NodeResources.NodeNetworks under
// the network's name (Alias).
type HostNetworkInfo struct {
	Name          string
	CIDR          string
	Interface     string
	ReservedPorts string
}

// NodeListStub is one row of GET /v1/nodes.
type NodeListStub struct {
	Address               string
	ID                    string
	Attributes            map[string]string `json:",omitempty"`
	Datacenter            string
	Name                  string
	NodeClass             string
	NodePool              string
	Version               string
	Drain                 bool
	SchedulingEligibility string
	Status                string
	StatusDescription     string
	Drivers               map[string]*DriverInfo
	NodeResources         *NodeResources         `json:",omitempty"`
	ReservedResources     *NodeReservedResources `json:",omitempty"`
	LastDrain             *DrainMetadata
	CreateIndex           uint64
	ModifyIndex           uint64
}

// NodeResources is what a node has in total.
type NodeResources struct {
	Cpu            NodeCpuResources
	Memory         NodeMemoryResources
	Disk           NodeDiskResources
	Networks       []*NetworkResource
	NodeNetworks   []*NodeNetworkResource
	MinDynamicPort int
	MaxDynamicPort int
}

// NodeCpuResources is CPU in MHz across all cores.
type NodeCpuResources struct {
	CpuShares          int64
	TotalCpuCores      uint16
	ReservableCpuCores []uint16
}

// NodeMemoryResources is memory in MiB.
type NodeMemoryResources struct{ MemoryMB int64 }

// NodeDiskResources is allocation disk in MiB.
type NodeDiskResources struct{ DiskMB int64 }

// NodeNetworkResource is one network interface the client found.
type NodeNetworkResource struct {
	Mode       string
	Device     string
	MacAddress string
	Speed      int
	Addresses  []NodeNetworkAddress
}

// NodeNetworkAddress is one address of a node interface.
type NodeNetworkAddress struct {
	Family        string
	Alias         string
	Address       string
	ReservedPorts string
	Gateway       string
}

// NodeReservedResources is what the node keeps back from allocations.
type NodeReservedResources struct {
	Cpu      NodeReservedCpuResources
	Memory   NodeReservedMemoryResources
	Disk     NodeReservedDiskResources
	Networks NodeReservedNetworkResources
}

// NodeReservedCpuResources is reserved CPU in MHz.
type NodeReservedCpuResources struct {
	CpuShares        int64
	ReservedCpuCores []uint16
}

// NodeReservedMemoryResources is reserved memory in MiB.
type NodeReservedMemoryResources struct{ MemoryMB int64 }

// NodeReservedDiskResources is reserved disk in MiB.
type NodeReservedDiskResources struct{ DiskMB int64 }

// NodeReservedNetworkResources lists host ports kept from allocations, as
// ranges like "22,80,8000-8100".
type NodeReservedNetworkResources struct{ ReservedHostPorts string }

// Allocatable returns CPU (MHz), memory and disk (MiB) a node offers to
// allocations: its totals less its reservations.
func (n *Node) Allocatable() (cpu, memoryMB, diskMB int64) {
	if n.NodeResources == nil {
		return 0, 0, 0
	}
	cpu, memoryMB, diskMB = n.NodeResources.Cpu.CpuShares, n.NodeResources.Memory.MemoryMB, n.NodeResources.Disk.DiskMB
	if r := n.ReservedResources; r != nil {
		cpu -= r.Cpu.CpuShares
		memoryMB -= r.Memory.MemoryMB
		diskMB -= r.Disk.DiskMB
	}
	return cpu, memoryMB, diskMB
}

// NodeEvent is one entry of a node's history.
type NodeEvent struct {
	Message     string
	Subsystem   string
	Details     map[string]string
	Timestamp   time.Time
	CreateIndex uint64
}

// DriverInfo is a driver's fingerprint on a node.
type DriverInfo struct {
	Attributes        map[string]string
	Detected          bool
	Healthy           bool
	HealthDescription string
	UpdateTime        time.Time
}

// DrainSpec is what a user asks for when draining a node. Deadline is how
// long allocations may take to migrate before they are stopped; zero means
// no deadline, and a negative value stops them at once.
type DrainSpec struct {
	Deadline         time.Duration
	IgnoreSystemJobs bool
}

// DrainStrategy is an active drain.
type DrainStrategy struct {
	DrainSpec
	ForceDeadline time.Time
	StartedAt     time.Time
}

// DrainMetadata records a node's last drain.
type DrainMetadata struct {
	StartedAt  time.Time
	UpdatedAt  time.Time
	Status     string
	AccessorID string
	Meta       map[string]string
}

// NodeUpdateDrainRequest is the body of PUT /v1/node/:id/drain. A nil
// DrainSpec ends the drain; MarkEligible then also makes the node eligible
// for new work again. Given with a DrainSpec, MarkEligible makes the node
// eligible once the drain completes (by default it stays ineligible).
type NodeUpdateDrainRequest struct {
	NodeID       string
	DrainSpec    *DrainSpec
	MarkEligible bool
	Meta         map[string]string
}

// NodeDrainUpdateResponse answers a drain update.
type NodeDrainUpdateResponse struct {
	NodeModifyIndex uint64
	EvalIDs         []string
	EvalCreateIndex uint64
	WriteMeta
}

// NodeUpdateEligibilityRequest is the body of PUT /v1/node/:id/eligibility.
type NodeUpdateEligibilityRequest struct {
	NodeID      string
	Eligibility string
}

// NodeEligibilityUpdateResponse answers an eligibility update.
type NodeEligibilityUpdateResponse struct {
	NodeModifyIndex uint64
	EvalIDs         []string
	EvalCreateIndex uint64
	WriteMeta
}
