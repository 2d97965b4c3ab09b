package structs

// MessageType is the first byte of every raft log entry; the rest is the
// msgpack-encoded request. Values are append-only: never renumber, because
// they are on disk.
type MessageType uint8

const (
	NodeRegisterRequestType MessageType = iota + 1
	NodeDeregisterRequestType
	NodeUpdateStatusRequestType
	NodeUpdateDrainRequestType
	NodeUpdateEligibilityRequestType
	JobRegisterRequestType
	JobDeregisterRequestType
	EvalUpdateRequestType
	EvalDeleteRequestType
	AllocClientUpdateRequestType
	ApplyPlanResultsRequestType
	AllocUpdateDesiredTransitionRequestType
	DeploymentStatusUpdateRequestType
	DeploymentDeleteRequestType
	SchedulerConfigRequestType
	JobStabilityRequestType
	JobBatchDeregisterRequestType
	NodeBatchDeregisterRequestType
	AllocStopRequestType
	GenericWriteRequestType
	JobScaleRequestType
	JobDispatchRequestType
	ACLPolicyUpsertRequestType
	ACLPolicyDeleteRequestType
	ACLTokenUpsertRequestType
	ACLTokenDeleteRequestType
	ACLTokenBootstrapRequestType
	ServerSecretRequestType

	// Deployment watcher (issue 13): promote canaries, set alloc health.
	DeploymentPromoteRequestType
	DeploymentAllocHealthRequestType

	// Native service registrations (issue 13, services).
	ServiceRegistrationUpsertRequestType
	ServiceRegistrationDeleteRequestType

	// Node-down batching (issue 16, storm): several missed heartbeats in
	// one entry.
	NodeBatchUpdateStatusRequestType

	// IgnoreUnknownTypeFlag marks a message type a newer server wrote that
	// an older one may skip instead of crashing.
	IgnoreUnknownTypeFlag MessageType = 128
)

var messageTypeNames = map[MessageType]string{
	NodeRegisterRequestType:                 "NodeRegister",
	NodeDeregisterRequestType:               "NodeDeregister",
	NodeUpdateStatusRequestType:             "NodeUpdateStatus",
	NodeUpdateDrainRequestType:              "NodeUpdateDrain",
	NodeUpdateEligibilityRequestType:        "NodeUpdateEligibility",
	JobRegisterRequestType:                  "JobRegister",
	JobDeregisterRequestType:                "JobDeregister",
	EvalUpdateRequestType:                   "EvalUpdate",
	EvalDeleteRequestType:                   "EvalDelete",
	AllocClientUpdateRequestType:            "AllocClientUpdate",
	ApplyPlanResultsRequestType:             "ApplyPlanResults",
	AllocUpdateDesiredTransitionRequestType: "AllocUpdateDesiredTransition",
	DeploymentStatusUpdateRequestType:       "DeploymentStatusUpdate",
	DeploymentDeleteRequestType:             "DeploymentDelete",
	SchedulerConfigRequestType:              "SchedulerConfig",
	JobStabilityRequestType:                 "JobStability",
	JobBatchDeregisterRequestType:           "JobBatchDeregister",
	NodeBatchDeregisterRequestType:          "NodeBatchDeregister",
	AllocStopRequestType:                    "AllocStop",
	GenericWriteRequestType:                 "GenericWrite",
	JobScaleRequestType:                     "JobScale",
	JobDispatchRequestType:                  "JobDispatch",
	ACLPolicyUpsertRequestType:              "ACLPolicyUpsert",
	ACLPolicyDeleteRequestType:              "ACLPolicyDelete",
	ACLTokenUpsertRequestType:               "ACLTokenUpsert",
	ACLTokenDeleteRequestType:               "ACLTokenDelete",
	ACLTokenBootstrapRequestType:            "ACLTokenBootstrap",
	ServerSecretRequestType:                 "ServerSecret",

	// Deployment watcher (issue 13).
	DeploymentPromoteRequestType:     "DeploymentPromote",
	DeploymentAllocHealthRequestType: "DeploymentAllocHealth",

	// Native service registrations (issue 13, services).
	ServiceRegistrationUpsertRequestType: "ServiceRegistrationUpsert",
	ServiceRegistrationDeleteRequestType: "ServiceRegistrationDelete",

	// Node-down batching (issue 16, storm).
	NodeBatchUpdateStatusRequestType: "NodeBatchUpdateStatus",
}

// String names the message type for logs.
func (t MessageType) String() string {
	if n, ok := messageTypeNames[t]; ok {
		return n
	}
	return "Unknown(" + itoa(int(t)) + ")"
}

// AllMessageTypes lists every message type, for tests that must cover all.
func AllMessageTypes() []MessageType {
	out := make([]MessageType, 0, len(messageTypeNames))
	for t := NodeRegisterRequestType; ; t++ {
		if _, ok := messageTypeNames[t]; !ok {
			return out
		}
		out = append(out, t)
	}
}
