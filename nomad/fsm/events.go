package fsm

import (
	"slices"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/nomad/stream"
	"github.com/drover-sched/drover/structs"
)

// The event stream is produced here, on every server: each raft entry's
// committed changes (which the state store hands over through OnChanges)
// become one event per changed job, alloc, eval, node, deployment or
// service, stamped with the entry's index and typed by the entry's message
// type. It reads nothing but the entry's index and the changed objects, so
// every server produces the same events; and it only wraps pointers to the
// stored (immutable) objects, leaving JSON encoding to the consumers, so
// it costs the FSM little.

// EventSink receives the events of each applied entry. *stream.Broker is
// one; Publish must not block.
type EventSink interface {
	Publish(index uint64, entryBytes int, events []structs.Event)
	CloseTokens(accessorIDs []string)
	// Reset is told that a snapshot replaced the state: the stream has a
	// gap no event describes.
	Reset()
}

// SetEventSink makes the FSM publish the events of every entry it applies
// from now on. Call it before raft starts applying.
func (f *FSM) SetEventSink(sink EventSink) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = sink
}

// collectChanges is the state store's OnChanges hook. It runs on the
// goroutine applying the entry (raft applies one at a time), and Apply
// takes what it collected once the entry's handler returns.
func (f *FSM) collectChanges(changes memdb.Changes) {
	f.pendingMu.Lock()
	f.pendingChanges = append(f.pendingChanges, changes...)
	f.pendingMu.Unlock()
}

// takeChanges returns the changes collected so far and starts afresh.
func (f *FSM) takeChanges() memdb.Changes {
	f.pendingMu.Lock()
	defer f.pendingMu.Unlock()
	changes := f.pendingChanges
	f.pendingChanges = nil
	return changes
}

// publishEvents turns the changes the entry at index (entryBytes long)
// committed into events and publishes them.
func (f *FSM) publishEvents(msgType structs.MessageType, index uint64, entryBytes int) {
	changes := f.takeChanges()
	f.noticeAllocChanges(index, changes)
	if f.events == nil || len(changes) == 0 {
		return
	}
	// The entry has committed: whatever happens here must not turn it
	// into a failed one. A change that makes no event (it cannot, but a
	// table could come to hold an unexpected type) loses the entry's
	// events, and says so, on every server alike.
	defer func() {
		if r := recover(); r != nil {
			f.logger.Error("the events of a raft entry were dropped", "index", index, "type", msgType.String(), "error", r)
		}
	}()
	events, deletedTokens := eventsFromChanges(msgType, index, changes)
	f.events.Publish(index, entryBytes, events)
	f.events.CloseTokens(deletedTokens)
}

// msgEventTypes is the event type of each message type's changes, as
// Nomad names them. Changes by message types not listed (a job's
// stability, say) get their topic's default (eventTypeDefaults), or the
// deletion type their converter sets.
var msgEventTypes = map[structs.MessageType]string{
	structs.NodeRegisterRequestType:                 structs.TypeNodeRegistration,
	structs.NodeDeregisterRequestType:               structs.TypeNodeDeregistration,
	structs.NodeBatchDeregisterRequestType:          structs.TypeNodeDeregistration,
	structs.NodeUpdateStatusRequestType:             structs.TypeNodeEvent,
	structs.NodeUpdateDrainRequestType:              structs.TypeNodeDrain,
	structs.NodeUpdateEligibilityRequestType:        structs.TypeNodeEligibilityUpdate,
	structs.JobRegisterRequestType:                  structs.TypeJobRegistered,
	structs.JobDispatchRequestType:                  structs.TypeJobRegistered,
	structs.JobScaleRequestType:                     structs.TypeJobRegistered,
	structs.JobDeregisterRequestType:                structs.TypeJobDeregistered,
	structs.JobBatchDeregisterRequestType:           structs.TypeJobBatchDeregistered,
	structs.EvalUpdateRequestType:                   structs.TypeEvalUpdated,
	structs.AllocClientUpdateRequestType:            structs.TypeAllocationUpdated,
	structs.ApplyPlanResultsRequestType:             structs.TypePlanResult,
	structs.AllocUpdateDesiredTransitionRequestType: structs.TypeAllocationUpdateDesiredStatus,
	structs.AllocStopRequestType:                    structs.TypeAllocationUpdateDesiredStatus,
	structs.DeploymentStatusUpdateRequestType:       structs.TypeDeploymentUpdate,
	structs.DeploymentPromoteRequestType:            structs.TypeDeploymentPromotion,
	structs.DeploymentAllocHealthRequestType:        structs.TypeDeploymentAllocHealth,

	// Node-down batching (issue 16, storm).
	structs.NodeBatchUpdateStatusRequestType: structs.TypeNodeEvent,
}

// eventTypeDefaults is the type of a change whose message type has none
// of its own in msgEventTypes.
var eventTypeDefaults = map[structs.Topic]string{
	structs.TopicJob:        structs.TypeJobRegistered,
	structs.TopicAllocation: structs.TypeAllocationUpdated,
	structs.TopicEvaluation: structs.TypeEvalUpdated,
	structs.TopicNode:       structs.TypeNodeEvent,
	structs.TopicDeployment: structs.TypeDeploymentUpdate,
	structs.TopicService:    structs.TypeServiceRegistration,
}

// eventsFromChanges is the events of one entry's changes, in the order
// they were made, and the accessor IDs of the ACL tokens it deleted.
// Deletions by garbage collection (evals, allocs, deployments) are not
// events, as in Nomad; deleted jobs, nodes and services are.
func eventsFromChanges(msgType structs.MessageType, index uint64, changes memdb.Changes) ([]structs.Event, []string) {
	events := make([]structs.Event, 0, len(changes))
	var deletedTokens []string
	for i := range changes {
		c := &changes[i]
		if c.Table == state.TableACLTokens {
			if c.Deleted() {
				if tok, ok := c.Before.(*structs.ACLToken); ok {
					deletedTokens = append(deletedTokens, tok.AccessorID)
				}
			}
			continue
		}
		if ev, ok := eventFromChange(msgType, index, c); ok {
			events = append(events, ev)
		}
	}
	if len(events) < cap(events) {
		// The buffer keeps the slice for thousands of entries, and
		// changes to tables without events (the index table's, at
		// least one per entry) left room for events that never came.
		events = slices.Clone(events)
	}
	return events, deletedTokens
}

// eventFromChange is the event of one change, if it makes one.
func eventFromChange(msgType structs.MessageType, index uint64, c *memdb.Change) (structs.Event, bool) {
	conv, ok := tableEvents[c.Table]
	if !ok || (c.Before == nil && c.After == nil) {
		return structs.Event{}, false
	}
	ev, ok := conv(c)
	if !ok {
		return structs.Event{}, false
	}
	ev.Index = index
	if ev.Topic == structs.TopicService {
		// A registration ends with its alloc, node or job, in their
		// entries: its type says what happened to it, not the entry.
		return ev, true
	}
	if t, ok := msgEventTypes[msgType]; ok {
		ev.Type = t
	} else if ev.Type == "" {
		ev.Type = eventTypeDefaults[ev.Topic]
	}
	return ev, true
}

// tableEvents converts a change of each table that has a topic. The
// entry's message type decides the event's type; a converter sets one
// only for a deletion by an entry whose message type has none, and for
// services, whose events are typed by the change alone.
var tableEvents = map[string]func(c *memdb.Change) (structs.Event, bool){
	state.TableJobs:        jobEvent,
	state.TableAllocs:      allocEvent,
	state.TableEvals:       evalEvent,
	state.TableNodes:       nodeEvent,
	state.TableDeployments: deploymentEvent,
	// Native service registrations (issue 13, services).
	state.TableServiceRegistrations: serviceEvent,
}

func jobEvent(c *memdb.Change) (structs.Event, bool) {
	if c.Deleted() {
		j := c.Before.(*structs.Job)
		return structs.Event{Topic: structs.TopicJob, Type: structs.TypeJobDeregistered, Key: j.ID, Namespace: j.Namespace,
			Payload: &structs.JobEventPayload{Job: j, Deleted: true}}, true
	}
	j := c.After.(*structs.Job)
	return structs.Event{Topic: structs.TopicJob, Key: j.ID, Namespace: j.Namespace,
		Payload: &structs.JobEventPayload{Job: j}}, true
}

func allocEvent(c *memdb.Change) (structs.Event, bool) {
	if c.Deleted() {
		return structs.Event{}, false
	}
	a := c.After.(*structs.Allocation) // the payload's encoding leaves out the job
	return structs.Event{Topic: structs.TopicAllocation, Key: a.ID, Namespace: a.Namespace,
		FilterKeys: nonEmpty(a.JobID, a.DeploymentID),
		Payload:    &structs.AllocEventPayload{Allocation: a}}, true
}

func evalEvent(c *memdb.Change) (structs.Event, bool) {
	if c.Deleted() {
		return structs.Event{}, false
	}
	e := c.After.(*structs.Evaluation)
	return structs.Event{Topic: structs.TopicEvaluation, Key: e.ID, Namespace: e.Namespace,
		FilterKeys: nonEmpty(e.JobID, e.DeploymentID),
		Payload:    &structs.EvalEventPayload{Evaluation: e}}, true
}

func nodeEvent(c *memdb.Change) (structs.Event, bool) {
	if c.Deleted() {
		n := c.Before.(*structs.Node)
		return structs.Event{Topic: structs.TopicNode, Type: structs.TypeNodeDeregistration, Key: n.ID,
			Payload: &structs.NodeEventPayload{Node: n}}, true
	}
	n := c.After.(*structs.Node)
	return structs.Event{Topic: structs.TopicNode, Key: n.ID, Payload: &structs.NodeEventPayload{Node: n}}, true
}

func deploymentEvent(c *memdb.Change) (structs.Event, bool) {
	if c.Deleted() {
		return structs.Event{}, false
	}
	d := c.After.(*structs.Deployment)
	return structs.Event{Topic: structs.TopicDeployment, Key: d.ID, Namespace: d.Namespace,
		FilterKeys: nonEmpty(d.JobID), Payload: &structs.DeploymentEventPayload{Deployment: d}}, true
}

func serviceEvent(c *memdb.Change) (structs.Event, bool) {
	typ, obj := structs.TypeServiceRegistration, c.After
	if c.Deleted() {
		typ, obj = structs.TypeServiceDeregistration, c.Before
	}
	sr := obj.(*structs.ServiceRegistration)
	return structs.Event{Topic: structs.TopicService, Type: typ, Key: sr.ID, Namespace: sr.Namespace,
		FilterKeys: nonEmpty(sr.ServiceName, sr.JobID), Payload: &structs.ServiceEventPayload{Service: sr}}, true
}

// nonEmpty is the non-empty ones of keys.
func nonEmpty(keys ...string) []string {
	out := keys[:0]
	for _, k := range keys {
		if k != "" {
			out = append(out, k)
		}
	}
	return out
}

var _ EventSink = (*stream.Broker)(nil)
