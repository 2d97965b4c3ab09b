package state

import (
	"github.com/drover-sched/drover/structs"
)

// The intern* functions below share the strings of an object the store is
// about to keep (see intern.go). Each changes only what it is given, which
// must be the store's own copy, not yet visible to any reader and shared
// with no caller; the comment on each says which parts that covers.

// internAllocFields shares the alloc's own strings: the IDs and names it
// has in common with the other allocs of its job, node, eval and
// deployment, and its statuses. Its ID and name are its own and are left.
func internAllocFields(a *structs.Allocation) {
	for _, s := range []*string{
		&a.Namespace, &a.EvalID, &a.NodeID, &a.NodeName, &a.JobID, &a.TaskGroup,
		&a.DesiredStatus, &a.DesiredDescription, &a.ClientStatus, &a.ClientDescription,
		&a.DeploymentID, &a.FollowupEvalID,
	} {
		internString(s)
	}
}

// internServerAlloc shares the strings of a, the store's deep copy of an
// alloc a server is writing (existing is its stored version, or nil). The
// metrics are the caller's still (Copy shares them): they are replaced by
// a compact copy, unless the server kept the stored alloc's own. Task
// states of an existing alloc are the stored ones (mergeServerUpdate), so
// only a new alloc's are interned.
func internServerAlloc(a, existing *structs.Allocation) {
	internAllocFields(a)
	a.AllocatedResources = shareAllocatedResources(a.AllocatedResources)
	if existing == nil || a.Metrics != existing.Metrics {
		a.Metrics = compactMetric(a.Metrics)
	}
	if existing == nil {
		a.TaskStates = internTaskStates(a.TaskStates)
	}
}

// internClientUpdate shares the strings of merged, the result of
// existing.ApplyClientUpdate(update): its statuses, and its task states
// when they came from update (ApplyClientUpdate copied them; otherwise
// they are the stored alloc's and already shared). Task states and events
// equal to existing's are existing's (shareTaskStates).
func internClientUpdate(merged, update, existing *structs.Allocation) {
	internString(&merged.ClientStatus)
	internString(&merged.ClientDescription)
	if update.TaskStates != nil {
		merged.TaskStates = shareTaskStates(merged.TaskStates, existing.TaskStates)
	}
}

// internTaskStates returns a copy of m, whose task states the caller owns,
// with task names, states and event texts shared.
func internTaskStates(m map[string]*structs.TaskState) map[string]*structs.TaskState {
	if m == nil {
		return nil
	}
	out := make(map[string]*structs.TaskState, len(m))
	for name, ts := range m {
		if ts != nil {
			internString(&ts.State)
			for _, e := range ts.Events {
				internTaskEvent(e)
			}
		}
		out[interned.intern(name)] = ts
	}
	return out
}

func internTaskEvent(e *structs.TaskEvent) {
	if e == nil {
		return
	}
	e.ShareStrings(interned.intern)
	if e.Details != nil && len(e.Details) == 0 {
		e.Details = emptyEventDetails
	} else {
		e.Details = internStringMap(e.Details)
	}
}

// emptyEventDetails is the Details of every stored event whose client
// sent an empty map, as the task runner does for most events: one map
// for all of them instead of one each (48 bytes, three or more per
// alloc). It stays empty because stored objects are never changed (a
// writer copies an event first, and TaskEvent.Copy copies Details). It
// is not nil: nil and an empty map encode differently, in JSON (null,
// {}) and in msgpack.
var emptyEventDetails = map[string]string{}

// internAllocatedResources shares task names and network strings of r,
// which the caller owns (a deep copy).
func internAllocatedResources(r *structs.AllocatedResources) {
	if r == nil {
		return
	}
	if r.Tasks != nil {
		tasks := make(map[string]*structs.AllocatedTaskResources, len(r.Tasks))
		for name, t := range r.Tasks {
			if t != nil {
				internNetworks(t.Networks)
			}
			tasks[interned.intern(name)] = t
		}
		r.Tasks = tasks
	}
	internNetworks(r.Shared.Networks)
	for i := range r.Shared.Ports {
		p := &r.Shared.Ports[i]
		internString(&p.Label)
		internString(&p.HostIP)
	}
}

func internNetworks(ns structs.Networks) {
	for _, n := range ns {
		if n == nil {
			continue
		}
		for _, s := range []*string{&n.Mode, &n.Device, &n.CIDR, &n.IP, &n.Hostname} {
			internString(s)
		}
		for _, ports := range [][]structs.Port{n.ReservedPorts, n.DynamicPorts} {
			for i := range ports {
				internString(&ports[i].Label)
				internString(&ports[i].HostNetwork)
			}
		}
	}
}

// compactMetric returns a copy of m for the store to keep: the scores of
// all candidates in one allocation, their names and equal scores shared
// with every other metric's, node IDs interned and the count maps shared
// (share_values.go). m is not changed (it may be the caller's).
func compactMetric(m *structs.AllocMetric) *structs.AllocMetric {
	if m == nil {
		return nil
	}
	c := *m
	c.NodesAvailable = shareIntMap(m.NodesAvailable)
	c.ClassFiltered = shareIntMap(m.ClassFiltered)
	c.ConstraintFiltered = shareIntMap(m.ConstraintFiltered)
	c.ClassExhausted = shareIntMap(m.ClassExhausted)
	c.DimensionExhausted = shareIntMap(m.DimensionExhausted)
	if m.QuotaExhausted != nil {
		c.QuotaExhausted = make([]string, len(m.QuotaExhausted))
		for i, q := range m.QuotaExhausted {
			c.QuotaExhausted[i] = interned.intern(q)
		}
	}
	if m.ScoreMetaData != nil {
		metas := make([]structs.NodeScoreMeta, len(m.ScoreMetaData))
		c.ScoreMetaData = make([]*structs.NodeScoreMeta, len(m.ScoreMetaData))
		for i, s := range m.ScoreMetaData {
			if s == nil {
				continue
			}
			metas[i] = structs.NodeScoreMeta{
				NodeID:    interned.intern(s.NodeID),
				Scores:    shareScores(shareScoreNames(s.Scores)),
				NormScore: s.NormScore,
			}
			c.ScoreMetaData[i] = &metas[i]
		}
	}
	return &c
}

// internNode shares the strings of n, the store's own copy of a node
// being registered: meta, link and driver keys and values recur across
// the fleet (attributes: shareNodeAttributes), and its ID and name recur in its allocs. Meta,
// links and driver attributes equal to another node's are that node's
// maps (share_values.go); stored nodes are never changed, and a status
// change shares them with the version before (copyNodeForUpdate).
func internNode(n *structs.Node) {
	for _, s := range []*string{
		&n.ID, &n.Name,
		&n.Datacenter, &n.NodeClass, &n.NodePool, &n.ComputedClass,
		&n.SchedulingEligibility, &n.Status, &n.StatusDescription,
	} {
		internString(s)
	}
	n.Meta = shareStringMap(n.Meta)
	n.Links = shareStringMap(n.Links)
	if n.Drivers != nil {
		drivers := make(map[string]*structs.DriverInfo, len(n.Drivers))
		for name, d := range n.Drivers {
			if d != nil {
				d.Attributes = shareStringMap(d.Attributes)
				internString(&d.HealthDescription)
			}
			drivers[interned.intern(name)] = d
		}
		n.Drivers = drivers
	}
	if n.NodeResources != nil {
		internNetworks(n.NodeResources.Networks)
	}
	// A new node's registration carries its first event ("Node
	// registered"), whose texts every node repeats.
	for _, e := range n.Events {
		if e != nil {
			internNodeEvent(e)
		}
	}
}

// internNodeEvent shares the texts of e, the store's own copy of an event
// about to be added to a node: every node records the same few.
func internNodeEvent(e *structs.NodeEvent) {
	internString(&e.Message)
	internString(&e.Subsystem)
	e.Details = internStringMap(e.Details)
}
