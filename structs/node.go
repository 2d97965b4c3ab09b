package structs

import (
	"maps"
	"time"
)

// Node statuses. A node is `initializing` until its client has fingerprinted
// it, `ready` while it heartbeats, `down` when it misses its TTL, and
// `disconnected` instead of down when some of its allocations' groups allow
// a disconnect window.
const (
	NodeStatusInit         = "initializing"
	NodeStatusReady        = "ready"
	NodeStatusDown         = "down"
	NodeStatusDisconnected = "disconnected"
)

// Scheduling eligibility.
const (
	NodeSchedulingEligible   = "eligible"
	NodeSchedulingIneligible = "ineligible"
)

// ValidNodeStatus reports whether s is a known node status.
func ValidNodeStatus(s string) bool {
	switch s {
	case NodeStatusInit, NodeStatusReady, NodeStatusDown, NodeStatusDisconnected:
		return true
	}
	return false
}

// ShouldDrainNode reports whether allocations on a node in status s must be
// replaced (the node is gone for good).
func ShouldDrainNode(s string) bool { return s == NodeStatusDown }

// Node is one machine running a Drover client.
type Node struct {
	ID         string
	SecretID   string `json:"-" bexpr:"-"`
	Datacenter string
	Name       string
	HTTPAddr   string
	TLSEnabled bool
	// Drain sits next to TLSEnabled so that the two bools share one word
	// (Attributes takes four words where a map took one; the Node stays in
	// its 320-byte size class). Field order changes no decoder's result.
	Drain                 bool
	Attributes            Attributes
	NodeResources         *NodeResources
	ReservedResources     *NodeReservedResources
	Links                 map[string]string
	Meta                  map[string]string
	NodeClass             string
	NodePool              string
	ComputedClass         string
	DrainStrategy         *DrainStrategy
	SchedulingEligibility string
	Status                string
	StatusDescription     string
	StatusUpdatedAt       int64
	Events                []*NodeEvent
	Drivers               map[string]*DriverInfo
	LastDrain             *DrainMetadata
	CreateIndex           uint64
	ModifyIndex           uint64
}

// Ready reports whether new work may be placed on the node.
func (n *Node) Ready() bool {
	return n.Status == NodeStatusReady && n.DrainStrategy == nil && n.SchedulingEligibility == NodeSchedulingEligible
}

// TerminalStatus reports whether the node is down.
func (n *Node) TerminalStatus() bool { return n.Status == NodeStatusDown }

// Canonicalize fills defaults a client may leave out.
func (n *Node) Canonicalize() {
	if n.Datacenter == "" {
		n.Datacenter = "dc1"
	}
	if n.NodePool == "" {
		n.NodePool = DefaultNodePool
	}
	if n.SchedulingEligibility == "" {
		if n.DrainStrategy != nil {
			n.SchedulingEligibility = NodeSchedulingIneligible
		} else {
			n.SchedulingEligibility = NodeSchedulingEligible
		}
	}
	if n.NodeResources == nil {
		n.NodeResources = &NodeResources{}
	}
	if n.NodeResources.MinDynamicPort == 0 {
		n.NodeResources.MinDynamicPort = DefaultMinDynamicPort
	}
	if n.NodeResources.MaxDynamicPort == 0 {
		n.NodeResources.MaxDynamicPort = DefaultMaxDynamicPort
	}
	if n.ReservedResources == nil {
		n.ReservedResources = &NodeReservedResources{}
	}
	if n.Attributes.IsNil() {
		n.Attributes = NewAttributes(map[string]string{})
	}
	if n.Meta == nil {
		n.Meta = map[string]string{}
	}
	if n.Drivers == nil {
		n.Drivers = map[string]*DriverInfo{}
	}
	n.Drain = n.DrainStrategy != nil
}

// Validate checks a node a client registers.
func (n *Node) Validate() error {
	p := newProblems()
	if n.ID == "" {
		p.add("node ID is missing")
	}
	n.validateSecret(p)
	if n.Name == "" {
		p.add("node name is missing")
	}
	if n.Datacenter == "" {
		p.add("node datacenter is missing")
	}
	if n.Status != "" && !ValidNodeStatus(n.Status) {
		p.add("node status %q is not one of initializing, ready, down, disconnected", n.Status)
	}
	if n.NodeResources != nil {
		r := n.NodeResources
		if r.MinDynamicPort < 0 || r.MaxDynamicPort > maxValidPort || (r.MaxDynamicPort != 0 && r.MinDynamicPort > r.MaxDynamicPort) {
			p.add("node dynamic port range %d-%d is invalid", r.MinDynamicPort, r.MaxDynamicPort)
		}
	}
	if n.ReservedResources != nil && n.ReservedResources.Networks.ReservedHostPorts != "" {
		if _, err := ParsePortRanges(n.ReservedResources.Networks.ReservedHostPorts); err != nil {
			p.add("reserved ports: %v", err)
		}
	}
	return p.err()
}

// Copy returns a deep copy, except that the copy shares n's Attributes,
// which nothing changes in place.
func (n *Node) Copy() *Node {
	if n == nil {
		return nil
	}
	c := *n
	c.NodeResources = n.NodeResources.Copy()
	c.ReservedResources = n.ReservedResources.Copy()
	c.Links = maps.Clone(n.Links)
	c.Meta = maps.Clone(n.Meta)
	c.DrainStrategy = copyPtr(n.DrainStrategy)
	c.Events = make([]*NodeEvent, len(n.Events))
	for i, e := range n.Events {
		c.Events[i] = e.Copy()
	}
	if n.Drivers != nil {
		c.Drivers = make(map[string]*DriverInfo, len(n.Drivers))
		for k, d := range n.Drivers {
			dc := *d
			dc.Attributes = maps.Clone(d.Attributes)
			c.Drivers[k] = &dc
		}
	}
	c.LastDrain = copyPtr(n.LastDrain)
	return &c
}

// MaxRetainedNodeEvents bounds the node event history.
const MaxRetainedNodeEvents = 10

// AddEvent appends an event, keeping the newest MaxRetainedNodeEvents.
func (n *Node) AddEvent(e *NodeEvent) {
	n.Events = append(n.Events, e)
	if len(n.Events) > MaxRetainedNodeEvents {
		n.Events = n.Events[len(n.Events)-MaxRetainedNodeEvents:]
	}
}

// Comparable returns the capacity left for allocations after reservations.
func (n *Node) Comparable() ComparableResources {
	c := n.NodeResources.Comparable()
	c.Subtract(n.ReservedResources.Comparable())
	return c
}

// DriverHealthy reports whether the named driver is detected and healthy.
func (n *Node) DriverHealthy(name string) bool {
	d, ok := n.Drivers[name]
	if ok {
		return d.Detected && d.Healthy
	}
	// Older clients advertise drivers only as attributes.
	v := n.Attributes.Value("driver." + name)
	return v == "1" || v == "true"
}

// NodeEvent is one entry of a node's history: registration, status changes,
// drains and driver health.
type NodeEvent struct {
	Message     string
	Subsystem   string
	Details     map[string]string
	Timestamp   time.Time
	CreateIndex uint64
}

// Node event subsystems.
const (
	NodeEventSubsystemCluster   = "Cluster"
	NodeEventSubsystemDrain     = "Drain"
	NodeEventSubsystemDriver    = "Driver"
	NodeEventSubsystemHeartbeat = "Heartbeat"
)

// Copy returns a deep copy.
func (e *NodeEvent) Copy() *NodeEvent {
	if e == nil {
		return nil
	}
	c := *e
	c.Details = maps.Clone(e.Details)
	return &c
}

// DriverInfo is a driver's fingerprint on a node.
type DriverInfo struct {
	Attributes        map[string]string
	Detected          bool
	Healthy           bool
	HealthDescription string
	UpdateTime        time.Time
}

// DrainSpec is what a user asks for when draining a node.
type DrainSpec struct {
	Deadline         time.Duration
	IgnoreSystemJobs bool
}

// DrainStrategy is an active drain: the spec plus when it must be finished.
// A Deadline of 0 means no deadline (ForceDeadline stays zero); a negative
// one (-force) sets ForceDeadline to the drain's start, so the deadline
// has passed from the first moment.
type DrainStrategy struct {
	DrainSpec
	ForceDeadline time.Time
	StartedAt     time.Time
	// MarkEligibleOnComplete makes the node eligible again when the
	// drainer completes the drain. It is the request's MarkEligible given
	// together with a drain spec (`node drain -enable
	// -keep-ineligible=false`); by default a drained node stays
	// ineligible, as in Nomad.
	MarkEligibleOnComplete bool
}

// DeadlinePassed reports whether the drain's deadline has come at now:
// everything still on the node must then be stopped. A drain without a
// deadline never passes it.
func (d *DrainStrategy) DeadlinePassed(now time.Time) bool {
	return d != nil && !d.ForceDeadline.IsZero() && !now.Before(d.ForceDeadline)
}

// DrainMetadata records the last drain for `node status`.
type DrainMetadata struct {
	StartedAt  time.Time
	UpdatedAt  time.Time
	Status     string
	AccessorID string
	Meta       map[string]string
}

// NodeListStub is the list view of a node.
type NodeListStub struct {
	Address               string
	ID                    string
	Attributes            Attributes
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
	NodeResources         *NodeResources
	ReservedResources     *NodeReservedResources
	LastDrain             *DrainMetadata
	CreateIndex           uint64
	ModifyIndex           uint64
}

// Stub returns the list view.
func (n *Node) Stub() *NodeListStub {
	addr := n.Attributes.Value("unique.network.ip-address")
	return &NodeListStub{
		Address: addr, ID: n.ID, Attributes: n.Attributes, Datacenter: n.Datacenter, Name: n.Name,
		NodeClass: n.NodeClass, NodePool: n.NodePool, Version: n.Attributes.Value("nomad.version"),
		Drain: n.DrainStrategy != nil, SchedulingEligibility: n.SchedulingEligibility,
		Status: n.Status, StatusDescription: n.StatusDescription, Drivers: n.Drivers,
		NodeResources: n.NodeResources, ReservedResources: n.ReservedResources, LastDrain: n.LastDrain,
		CreateIndex: n.CreateIndex, ModifyIndex: n.ModifyIndex,
	}
}
