package structs

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
// left out (nil), as Nomad leaves it out: an alloc event is about the
// alloc, and the job would make every alloc event as large as its job.
type AllocEventPayload struct{ Allocation *Allocation }

// EvalEventPayload is the payload of an Evaluation event.
type EvalEventPayload struct{ Evaluation *Evaluation }

// NodeEventPayload is the payload of a Node event. The node's secret is
// never in it (Node.SecretID is not encoded).
type NodeEventPayload struct{ Node *Node }

// DeploymentEventPayload is the payload of a Deployment event.
type DeploymentEventPayload struct{ Deployment *Deployment }
