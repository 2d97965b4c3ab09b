package structs

// JobDispatchRequest dispatches a parameterized job (`job dispatch`,
// POST /v1/job/:id/dispatch): it creates a child job that carries Payload
// and Meta merged over the parent's meta. With IdempotencyToken set, a
// dispatch while a child with the same token is not dead returns that
// child instead of creating another. IdPrefixTemplate and Priority are
// Nomad's optional extras: a word put into the child's ID, and a priority
// for the child other than the parent's.
type JobDispatchRequest struct {
	JobID            string
	Payload          []byte
	Meta             map[string]string
	IdempotencyToken string
	IdPrefixTemplate string
	Priority         int
	WriteRequest
}

// JobDispatchResponse names the dispatched child and the evaluation that
// schedules it, with the raft indexes that created them, in Nomad's shape.
// A dispatch answered by an earlier child (same idempotency token) names
// that child and no evaluation.
type JobDispatchResponse struct {
	DispatchedJobID string
	EvalID          string
	EvalCreateIndex uint64
	JobCreateIndex  uint64
	WriteMeta
}

// JobDispatchApplyRequest is the raft entry of a dispatch: the child job,
// fully derived by the leader (ID, submit time, payload, merged meta), and
// the evaluation that schedules it, stored together. The FSM checks again,
// against the state the entry meets, that the parent is still a running
// parameterized job and that no live child holds the child's idempotency
// token; if one does, the entry stores nothing.
type JobDispatchApplyRequest struct {
	Job  *Job
	Eval *Evaluation
}
