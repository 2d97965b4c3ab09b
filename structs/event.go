package structs

import "encoding/json"

// The event stream: what changed in the state, one event per changed
// object, in the shapes of Nomad's /v1/event/stream, so Nomad's Go
// client (api.EventStream) and tools written for Nomad read it as is.

// Topic is the kind of object an event is about. A subscriber asks for
// topics (and keys within them); "*" asks for all.
type Topic string

// Topics of the event stream, named as Nomad names them.
const (
	TopicJob        Topic = "Job"
	TopicAllocation Topic = "Allocation"
	TopicEvaluation Topic = "Evaluation"
	TopicNode       Topic = "Node"
	TopicDeployment Topic = "Deployment"
	TopicService    Topic = "Service"
	TopicAll        Topic = "*"
)

// EventTopics are the topics Drover produces, in the order the help and
// errors list them.
var EventTopics = []Topic{TopicJob, TopicAllocation, TopicEvaluation, TopicNode, TopicDeployment, TopicService}

// Event types, named as Nomad names them. The type says which raft entry
// produced the change: a plan result's allocs are "PlanResult" events, a
// client's report of the same allocs "AllocationUpdated" ones.
const (
	TypeNodeRegistration              = "NodeRegistration"
	TypeNodeDeregistration            = "NodeDeregistration"
	TypeNodeEligibilityUpdate         = "NodeEligibility"
	TypeNodeDrain                     = "NodeDrain"
	TypeNodeEvent                     = "NodeEvent"
	TypeDeploymentUpdate              = "DeploymentStatusUpdate"
	TypeDeploymentPromotion           = "DeploymentPromotion"
	TypeDeploymentAllocHealth         = "DeploymentAllocHealth"
	TypeAllocationUpdated             = "AllocationUpdated"
	TypeAllocationUpdateDesiredStatus = "AllocationUpdateDesiredStatus"
	TypeEvalUpdated                   = "EvaluationUpdated"
	TypeJobRegistered                 = "JobRegistered"
	TypeJobDeregistered               = "JobDeregistered"
	TypeJobBatchDeregistered          = "JobBatchDeregistered"
	TypePlanResult                    = "PlanResult"
	TypeServiceRegistration           = "ServiceRegistration"
	TypeServiceDeregistration         = "ServiceDeregistration"
)

// Event is one change to one object at one raft index.
type Event struct {
	Topic Topic
	Type  string
	// Key is the object's ID (a job's, alloc's, node's ...); FilterKeys
	// are the other names a subscriber may filter it by (an alloc's job
	// and deployment, a service's name and job). `topic=Allocation:web`
	// matches an event whose Key or one of whose FilterKeys is "web".
	Key        string
	Namespace  string
	FilterKeys []string
	// Index is the raft index of the entry that made the change.
	Index uint64
	// Payload is the object after the change (before it, for a delete),
	// wrapped as Nomad wraps it: one of the *EventPayload types below.
	Payload any
}

// JobEventPayload is the payload of a Job event. Deleted is set when the
// job was purged; Job is then the job as it was.
type JobEventPayload struct {
	Job     *Job
	Deleted bool `json:",omitempty"`
}

// AllocEventPayload is the payload of an Allocation event. Its Job is
// left out of the encoding, as Nomad leaves it out: an alloc event is
// about the alloc, and the job would make every alloc event as large as
// its job.
//
// Allocation is the stored alloc itself, never changed: the server's
// event buffer holds thousands of alloc events, and a copy without the
// job in each cost it an alloc's fields (about 450 bytes) per event.
// MarshalJSON leaves the job out instead.
type AllocEventPayload struct{ Allocation *Allocation }

// MarshalJSON encodes the payload with the alloc's Job null.
func (p *AllocEventPayload) MarshalJSON() ([]byte, error) {
	var out struct{ Allocation *Allocation }
	if p.Allocation != nil {
		a := *p.Allocation
		a.Job = nil
		out.Allocation = &a
	}
	return json.Marshal(out)
}

// EvalEventPayload is the payload of an Evaluation event.
type EvalEventPayload struct{ Evaluation *Evaluation }

// NodeEventPayload is the payload of a Node event. The node's secret is
// never in it (Node.SecretID is not encoded).
type NodeEventPayload struct{ Node *Node }

// DeploymentEventPayload is the payload of a Deployment event.
type DeploymentEventPayload struct{ Deployment *Deployment }

// ServiceEventPayload is the payload of a Service event: the
// registration added, changed, or (for ServiceDeregistration) removed.
type ServiceEventPayload struct{ Service *ServiceRegistration }

// EventPollRequest asks a server for the events from Index on: the RPC
// (Event.Poll) by which an agent without a server relays
// /v1/event/stream. Each poll opens a subscription, waits up to
// MaxQueryTime (default and at most a few seconds) for the first frame,
// and returns what is ready.
type EventPollRequest struct {
	// Topics as in the stream's topic parameters; empty for all.
	Topics map[Topic][]string
	// Index is the raft index to start from (NextIndex of the previous
	// poll when Resume is set).
	Index uint64
	// Resume says the poll continues a stream: if events from Index on
	// were already dropped, the stream fell behind and must end, rather
	// than start again at the oldest kept.
	Resume bool
	// NoWait returns at once with what is ready, so the relaying agent
	// can answer (or refuse) its caller without delay.
	NoWait bool
	QueryOptions
}

// EventPollResponse is one poll's frames.
type EventPollResponse struct {
	// Frames are lines of the stream, each a {"Index":..,"Events":[..]}
	// object with its newline.
	Frames [][]byte
	// NextIndex is where the next poll resumes.
	NextIndex uint64
	// StartIndex and Truncated are the subscription's (see
	// stream.Subscription): when Truncated, events before StartIndex
	// were dropped.
	StartIndex uint64
	Truncated  bool
	// Closed, when set, is why the server ended the stream (the consumer
	// fell behind, the token was deleted, the server shuts down).
	Closed string
}

// IsLongPoll: a poll that waits goes on the connection pool's long-poll
// sessions, like a blocking query.
func (r *EventPollRequest) IsLongPoll() bool { return !r.NoWait }
