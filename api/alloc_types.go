package api

import (
	"sort"
	"time"
)

// Allocation desired statuses: what the servers want.
const (
	AllocDesiredStatusRun   = "run"
	AllocDesiredStatusStop  = "stop"
	AllocDesiredStatusEvict = "evict"
)

// Allocation client statuses: what the client reports (and, for lost and
// unknown, what the servers conclude when the client is gone).
const (
	AllocClientStatusPending  = "pending"
	AllocClientStatusRunning  = "running"
	AllocClientStatusComplete = "complete"
	AllocClientStatusFailed   = "failed"
	AllocClientStatusLost     = "lost"
	AllocClientStatusUnknown  = "unknown"
)

// Task states.
const (
	TaskStatePending = "pending"
	TaskStateRunning = "running"
	TaskStateDead    = "dead"
)

// Allocation is one placement of a task group on a node
// (GET /v1/allocation/:id).
type Allocation struct {
	ID                    string
	Namespace             string
	EvalID                string
	Name                  string
	NodeID                string
	NodeName              string
	JobID                 string
	Job                   *Job
	TaskGroup             string
	AllocatedResources    *AllocatedResources
	Metrics               *AllocationMetric
	DesiredStatus         string
	DesiredDescription    string
	DesiredTransition     DesiredTransition
	ClientStatus          string
	ClientDescription     string
	TaskStates            map[string]*TaskState
	DeploymentID          string
	DeploymentStatus      *AllocDeploymentStatus
	FollowupEvalID        string
	PreviousAllocation    string
	NextAllocation        string
	RescheduleTracker     *RescheduleTracker
	NetworkStatus         *AllocNetworkStatus
	PreemptedAllocations  []string
	PreemptedByAllocation string
	CreateIndex           uint64
	ModifyIndex           uint64
	AllocModifyIndex      uint64
	CreateTime            int64
	ModifyTime            int64

	// AllocStates is Drover's addition: the history of server-side status
	// changes (unknown on disconnect, reconnects), which task events do not
	// record.
	AllocStates []*AllocState `json:",omitempty"`
}

// ClientTerminalStatus reports whether the client has finished with the
// allocation: its resources are free only then.
func (a *Allocation) ClientTerminalStatus() bool {
	return clientTerminal(a.ClientStatus)
}

// AllocationListStub is one row of an allocation list.
type AllocationListStub struct {
	ID                    string
	EvalID                string
	Name                  string
	Namespace             string
	NodeID                string
	NodeName              string
	JobID                 string
	JobType               string
	JobVersion            uint64
	TaskGroup             string
	AllocatedResources    *AllocatedResources `json:",omitempty"`
	DesiredStatus         string
	DesiredDescription    string
	ClientStatus          string
	ClientDescription     string
	DesiredTransition     DesiredTransition
	TaskStates            map[string]*TaskState
	DeploymentStatus      *AllocDeploymentStatus
	FollowupEvalID        string
	NextAllocation        string
	RescheduleTracker     *RescheduleTracker
	PreemptedAllocations  []string
	PreemptedByAllocation string
	CreateIndex           uint64
	ModifyIndex           uint64
	CreateTime            int64
	ModifyTime            int64
}

// ClientTerminalStatus reports whether the client has finished with the
// allocation.
func (a *AllocationListStub) ClientTerminalStatus() bool {
	return clientTerminal(a.ClientStatus)
}

func clientTerminal(s string) bool {
	switch s {
	case AllocClientStatusComplete, AllocClientStatusFailed, AllocClientStatusLost:
		return true
	}
	return false
}

// SortAllocationsNewestFirst orders stubs by CreateIndex, newest first, the
// order status commands list them in.
func SortAllocationsNewestFirst(allocs []*AllocationListStub) {
	sort.SliceStable(allocs, func(i, j int) bool { return allocs[i].CreateIndex > allocs[j].CreateIndex })
}

// DesiredTransition holds server requests to move an allocation that the
// scheduler acts on later.
type DesiredTransition struct {
	Migrate         *bool
	Reschedule      *bool
	ForceReschedule *bool
	NoShutdownDelay *bool
}

// AllocDeploymentStatus is an allocation's health within a deployment.
type AllocDeploymentStatus struct {
	Healthy     *bool
	Timestamp   time.Time
	Canary      bool
	ModifyIndex uint64
}

// AllocNetworkStatus is the address the allocation's network namespace got.
type AllocNetworkStatus struct {
	InterfaceName string
	Address       string
	DNS           *DNSConfig
}

// AllocState is one entry of an allocation's status history.
type AllocState struct {
	Field string
	Value string
	Time  time.Time
}

// TaskState is what the client reports about one task.
type TaskState struct {
	State       string
	Failed      bool
	Restarts    uint64
	LastRestart time.Time
	StartedAt   time.Time
	FinishedAt  time.Time
	Events      []*TaskEvent
}

// Task event types the CLI gives special wording.
const (
	TaskReceived          = "Received"
	TaskSetup             = "Task Setup"
	TaskStarted           = "Started"
	TaskTerminated        = "Terminated"
	TaskKilling           = "Killing"
	TaskKilled            = "Killed"
	TaskRestarting        = "Restarting"
	TaskNotRestarting     = "Not Restarting"
	TaskDriverFailure     = "Driver Failure"
	TaskFailedValidation  = "Failed Validation"
	TaskSiblingFailed     = "Sibling Task Failed"
	TaskRestoreFailed     = "Failed Restoring Task"
	TaskClientReconnected = "Reconnected"
)

// TaskEvent is one thing that happened to a task. Time is Unix nanoseconds.
type TaskEvent struct {
	Type            string
	Time            int64
	Message         string
	DisplayMessage  string
	Details         map[string]string
	FailsTask       bool
	RestartReason   string
	DriverError     string
	ExitCode        int
	Signal          int
	KillTimeout     time.Duration
	KillError       string
	KillReason      string
	StartDelay      int64
	DownloadError   string
	ValidationError string
	DiskLimit       int64
	FailedSibling   string
	TaskSignal      string
	DriverMessage   string
}

// RescheduleTracker records the reschedules that led to an allocation.
type RescheduleTracker struct {
	Events []*RescheduleEvent
}

// RescheduleEvent is one reschedule: which allocation was replaced, when.
type RescheduleEvent struct {
	RescheduleTime int64
	PrevAllocID    string
	PrevNodeID     string
	Delay          time.Duration
}

// AllocatedResources is what the scheduler reserved for an allocation.
type AllocatedResources struct {
	Tasks  map[string]*AllocatedTaskResources
	Shared AllocatedSharedResources
}

// AllocatedTaskResources is one task's reservation.
type AllocatedTaskResources struct {
	Cpu      AllocatedCpuResources
	Memory   AllocatedMemoryResources
	Networks []*NetworkResource
}

// AllocatedCpuResources is CPU in MHz, or whole reserved cores.
type AllocatedCpuResources struct {
	CpuShares     int64
	ReservedCores []uint16
}

// AllocatedMemoryResources is memory in MiB.
type AllocatedMemoryResources struct {
	MemoryMB    int64
	MemoryMaxMB int64
}

// AllocatedSharedResources is what the group's tasks share: disk and the
// group network with its ports.
type AllocatedSharedResources struct {
	DiskMB   int64
	Networks []*NetworkResource
	Ports    []PortMapping
}

// PortMapping is one allocated port: host port Value on HostIP, mapped to To
// inside the allocation.
type PortMapping struct {
	Label  string
	Value  int
	To     int
	HostIP string
}

// Totals sums CPU (MHz), memory (MiB) and disk (MiB) over the tasks and the
// shared disk.
func (r *AllocatedResources) Totals() (cpu, memoryMB, diskMB int64) {
	if r == nil {
		return 0, 0, 0
	}
	for _, t := range r.Tasks {
		cpu += t.Cpu.CpuShares
		memoryMB += t.Memory.MemoryMB
	}
	return cpu, memoryMB, r.Shared.DiskMB
}

// AllocStopResponse answers POST /v1/allocation/:id/stop.
type AllocStopResponse struct {
	EvalID string
	Index  uint64
	WriteMeta
}

// AllocResourceUsage is a client's report of what an allocation uses
// (GET /v1/client/allocation/:id/stats).
type AllocResourceUsage struct {
	ResourceUsage *ResourceUsage
	Tasks         map[string]*TaskResourceUsage
	Timestamp     int64
}

// TaskResourceUsage is one task's usage.
type TaskResourceUsage struct {
	ResourceUsage *ResourceUsage
	Timestamp     int64
	Pids          map[string]*ResourceUsage
}

// ResourceUsage is memory and CPU use at one moment.
type ResourceUsage struct {
	MemoryStats *MemoryStats
	CpuStats    *CpuStats
}

// MemoryStats is memory use in bytes.
type MemoryStats struct {
	RSS            uint64
	Cache          uint64
	Swap           uint64
	Usage          uint64
	MaxUsage       uint64
	KernelUsage    uint64
	KernelMaxUsage uint64
	Measured       []string
}

// CpuStats is CPU use; TotalTicks is in MHz.
type CpuStats struct {
	SystemMode       float64
	UserMode         float64
	TotalTicks       float64
	ThrottledPeriods uint64
	ThrottledTime    uint64
	Percent          float64
	Measured         []string
}
