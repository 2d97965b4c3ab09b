package structs

import (
	"strconv"
	"strings"
	"time"
)

// Allocation desired statuses, owned by the servers.
const (
	AllocDesiredStatusRun   = "run"
	AllocDesiredStatusStop  = "stop"
	AllocDesiredStatusEvict = "evict"
)

// Allocation client statuses, owned by the client, except `lost` and
// `unknown`, which a server sets through a plan when the node is down or
// disconnected.
const (
	AllocClientStatusPending  = "pending"
	AllocClientStatusRunning  = "running"
	AllocClientStatusComplete = "complete"
	AllocClientStatusFailed   = "failed"
	AllocClientStatusLost     = "lost"
	AllocClientStatusUnknown  = "unknown"
)

// Allocation is one placement of a task group on a node: the unit the
// scheduler decides and the client runs.
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
	Metrics               *AllocMetric
	DesiredStatus         string
	DesiredDescription    string
	DesiredTransition     DesiredTransition
	ClientStatus          string
	ClientDescription     string
	TaskStates            map[string]*TaskState
	AllocStates           []*AllocState
	PreviousAllocation    string
	NextAllocation        string
	DeploymentID          string
	DeploymentStatus      *AllocDeploymentStatus
	RescheduleTracker     *RescheduleTracker
	NetworkStatus         *AllocNetworkStatus
	FollowupEvalID        string
	PreemptedAllocations  []string
	PreemptedByAllocation string
	CreateIndex           uint64
	ModifyIndex           uint64
	AllocModifyIndex      uint64
	CreateTime            int64
	ModifyTime            int64
}

// DesiredTransition carries server intentions that are not a status: that
// the alloc should migrate off a draining node, or be rescheduled.
type DesiredTransition struct {
	Migrate         *bool
	Reschedule      *bool
	ForceReschedule *bool
	NoShutdownDelay *bool
}

// ShouldMigrate reports whether the drainer asked for a migration.
func (d DesiredTransition) ShouldMigrate() bool { return d.Migrate != nil && *d.Migrate }

// ShouldReschedule reports whether a reschedule was requested.
func (d DesiredTransition) ShouldReschedule() bool { return d.Reschedule != nil && *d.Reschedule }

// ShouldForceReschedule reports whether a user forced a reschedule.
func (d DesiredTransition) ShouldForceReschedule() bool {
	return d.ForceReschedule != nil && *d.ForceReschedule
}

// Merge overlays the set fields of o.
func (d *DesiredTransition) Merge(o *DesiredTransition) {
	if o.Migrate != nil {
		d.Migrate = o.Migrate
	}
	if o.Reschedule != nil {
		d.Reschedule = o.Reschedule
	}
	if o.ForceReschedule != nil {
		d.ForceReschedule = o.ForceReschedule
	}
	if o.NoShutdownDelay != nil {
		d.NoShutdownDelay = o.NoShutdownDelay
	}
}

// AllocDeploymentStatus is the client's health report for deployments.
type AllocDeploymentStatus struct {
	Healthy     *bool
	Timestamp   time.Time
	Canary      bool
	ModifyIndex uint64
}

// AllocNetworkStatus is the address the client set up for the alloc.
type AllocNetworkStatus struct {
	InterfaceName string
	Address       string
	DNS           *DNSConfig
}

// AllocState is one entry in an allocation's history of server-observed
// status changes. Disconnects (ClientStatus -> unknown) and reconnects are
// recorded here rather than in task events, so the scheduler can tell an
// alloc waiting to be reconnected from one already reconnected.
type AllocState struct {
	Field string
	Value string
	Time  time.Time
}

// AllocStateFieldClientStatus is the only field tracked in AllocStates.
const AllocStateFieldClientStatus = "ClientStatus"

// TaskState is the client's view of one task.
type TaskState struct {
	State       string
	Failed      bool
	Restarts    uint64
	LastRestart time.Time
	StartedAt   time.Time
	FinishedAt  time.Time
	Events      []*TaskEvent
}

// Task states.
const (
	TaskStatePending = "pending"
	TaskStateRunning = "running"
	TaskStateDead    = "dead"
)

// Copy returns a deep copy.
func (t *TaskState) Copy() *TaskState {
	if t == nil {
		return nil
	}
	c := *t
	c.Events = make([]*TaskEvent, len(t.Events))
	for i, e := range t.Events {
		c.Events[i] = e.Copy()
	}
	return &c
}

// Successful reports whether the task finished without failing.
func (t *TaskState) Successful() bool { return t.State == TaskStateDead && !t.Failed }

// RescheduleTracker is the chain of reschedules that led to an allocation.
// It is carried to every replacement, so attempts are counted across the
// chain, whether the predecessor failed, was lost, or was disconnected.
type RescheduleTracker struct {
	Events         []*RescheduleEvent
	LastReschedule string
}

// RescheduleEvent records one reschedule.
type RescheduleEvent struct {
	RescheduleTime int64
	PrevAllocID    string
	PrevNodeID     string
	Delay          time.Duration
}

// Copy returns a deep copy.
func (r *RescheduleTracker) Copy() *RescheduleTracker {
	if r == nil {
		return nil
	}
	c := &RescheduleTracker{LastReschedule: r.LastReschedule, Events: make([]*RescheduleEvent, len(r.Events))}
	for i, e := range r.Events {
		ec := *e
		c.Events[i] = &ec
	}
	return c
}

// Copy returns a deep copy, sharing the Job (jobs in the state store are
// immutable and shared on purpose).
func (a *Allocation) Copy() *Allocation {
	if a == nil {
		return nil
	}
	c := a.CopySkipJob()
	c.Job = a.Job
	return c
}

// CopySkipJob returns a deep copy with the job pointer left as is; callers
// that change the job must copy it themselves. The placement metrics are
// shared too: the scheduler writes them once, nothing changes them after,
// and a deep copy of them on every client update was the largest part of
// a server's heap per alloc. Assign a new AllocMetric rather than change
// the one an alloc has.
func (a *Allocation) CopySkipJob() *Allocation {
	c := *a
	c.AllocatedResources = a.AllocatedResources.Copy()
	if a.TaskStates != nil {
		c.TaskStates = make(map[string]*TaskState, len(a.TaskStates))
		for k, v := range a.TaskStates {
			c.TaskStates[k] = v.Copy()
		}
	}
	c.AllocStates = copyPtrs(a.AllocStates)
	c.DeploymentStatus = copyPtr(a.DeploymentStatus)
	c.RescheduleTracker = a.RescheduleTracker.Copy()
	c.NetworkStatus = copyPtr(a.NetworkStatus)
	c.PreemptedAllocations = copyStrings(a.PreemptedAllocations)
	return &c
}

// Index returns the alloc's index within its group, parsed from its name
// "job.group[index]", or -1 if the name has none.
func (a *Allocation) Index() int {
	return AllocIndexFromName(a.Name)
}

// AllocIndexFromName parses the index out of "job.group[index]".
func AllocIndexFromName(name string) int {
	l := strings.LastIndexByte(name, '[')
	r := strings.LastIndexByte(name, ']')
	if l < 0 || r <= l+1 {
		return -1
	}
	n, err := strconv.Atoi(name[l+1 : r])
	if err != nil {
		return -1
	}
	return n
}

// AllocName builds the canonical "job.group[index]" name.
func AllocName(job, group string, index int) string {
	return job + "." + group + "[" + strconv.Itoa(index) + "]"
}

// LookupTaskGroup returns the alloc's group from its job version.
func (a *Allocation) LookupTaskGroup() *TaskGroup { return a.Job.LookupTaskGroup(a.TaskGroup) }

// NamespacedJobID returns the alloc's job key.
func (a *Allocation) NamespacedJobID() NamespacedID {
	return NamespacedID{ID: a.JobID, Namespace: a.Namespace}
}

// DisconnectStrategy returns the group's disconnect block, or nil.
func (a *Allocation) DisconnectStrategy() *DisconnectStrategy {
	if tg := a.LookupTaskGroup(); tg != nil {
		return tg.Disconnect
	}
	return nil
}

// SupportsDisconnect reports whether the alloc's group allows its node to be
// disconnected for a while before the alloc is lost.
func (a *Allocation) SupportsDisconnect() bool {
	d := a.DisconnectStrategy()
	return d != nil && d.LostAfter > 0
}

// DisconnectTimeout returns when an alloc that became unknown at t expires.
func (a *Allocation) DisconnectTimeout(t time.Time) time.Time {
	d := a.DisconnectStrategy()
	if d == nil {
		return t
	}
	return t.Add(d.LostAfter)
}

// AllocListStub is the list view of an allocation.
type AllocListStub struct {
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
	AllocatedResources    *AllocatedResources
	DesiredStatus         string
	DesiredDescription    string
	ClientStatus          string
	ClientDescription     string
	DesiredTransition     DesiredTransition
	TaskStates            map[string]*TaskState
	DeploymentStatus      *AllocDeploymentStatus
	FollowupEvalID        string
	RescheduleTracker     *RescheduleTracker
	PreemptedAllocations  []string
	PreemptedByAllocation string
	CreateIndex           uint64
	ModifyIndex           uint64
	CreateTime            int64
	ModifyTime            int64
}

// Stub returns the list view.
func (a *Allocation) Stub() *AllocListStub {
	s := &AllocListStub{
		ID: a.ID, EvalID: a.EvalID, Name: a.Name, Namespace: a.Namespace, NodeID: a.NodeID,
		NodeName: a.NodeName, JobID: a.JobID, TaskGroup: a.TaskGroup,
		AllocatedResources: a.AllocatedResources, DesiredStatus: a.DesiredStatus,
		DesiredDescription: a.DesiredDescription, ClientStatus: a.ClientStatus,
		ClientDescription: a.ClientDescription, DesiredTransition: a.DesiredTransition,
		TaskStates: a.TaskStates, DeploymentStatus: a.DeploymentStatus,
		FollowupEvalID: a.FollowupEvalID, RescheduleTracker: a.RescheduleTracker,
		PreemptedAllocations: a.PreemptedAllocations, PreemptedByAllocation: a.PreemptedByAllocation,
		CreateIndex: a.CreateIndex, ModifyIndex: a.ModifyIndex, CreateTime: a.CreateTime, ModifyTime: a.ModifyTime,
	}
	if a.Job != nil {
		s.JobType = a.Job.Type
		s.JobVersion = a.Job.Version
	}
	return s
}
