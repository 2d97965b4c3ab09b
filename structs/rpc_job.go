package structs

import "time"

// JobRegisterRequest registers or updates a job. With EnforceIndex the write
// only happens if the job's current JobModifyIndex equals JobModifyIndex
// (0 meaning the job must not exist): check-and-set for `job run -check-index`.
// Eval is filled by the leader before the raft entry, so the FSM creates the
// job and its evaluation atomically with IDs and times it did not invent.
type JobRegisterRequest struct {
	Job            *Job
	EnforceIndex   bool
	JobModifyIndex uint64
	PreserveCounts bool
	PolicyOverride bool
	Eval           *Evaluation
	WriteRequest
}

// JobRegisterResponse answers a registration.
type JobRegisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	Warnings        string
	QueryMeta
}

// JobDeregisterRequest stops a job (or, with Purge, removes it once its
// allocations are terminal). Eval and SubmitTime are set by the leader.
type JobDeregisterRequest struct {
	JobID      string
	Purge      bool
	Global     bool
	Eval       *Evaluation
	SubmitTime int64
	WriteRequest
}

// JobDeregisterResponse answers a deregistration.
type JobDeregisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	VolumeEvalID    string
	QueryMeta
}

// JobBatchDeregisterRequest removes several jobs in one entry (used by GC).
type JobBatchDeregisterRequest struct {
	Jobs  map[NamespacedID]*JobDeregisterOptions
	Evals []*Evaluation
	WriteRequest
}

// JobDeregisterOptions configures one job of a batch deregister.
type JobDeregisterOptions struct {
	Purge bool
	// ExpectedModifyIndex, when not zero, makes a purge conditional: it is
	// the job's ModifyIndex when garbage collection found the job dead. The
	// FSM skips the job (without failing the entry) if the job changed
	// since, is no longer dead, or has allocations or evaluations that are
	// not finished, because a job re-registered between the GC's read and
	// the raft apply must not be purged. Zero (an entry written before the
	// field existed, or an operator's purge) deletes unconditionally.
	ExpectedModifyIndex uint64
}

// JobSpecificRequest names one job.
type JobSpecificRequest struct {
	JobID string
	All   bool
	QueryOptions
}

// JobListRequest lists jobs.
type JobListRequest struct {
	QueryOptions
}

// JobListResponse answers JobListRequest.
type JobListResponse struct {
	Jobs []*JobListStub
	QueryMeta
}

// SingleJobResponse answers a lookup of one job (Job is nil if not found).
type SingleJobResponse struct {
	Job *Job
	QueryMeta
}

// JobSummaryResponse answers a summary lookup.
type JobSummaryResponse struct {
	JobSummary *JobSummary
	QueryMeta
}

// JobVersionsRequest lists a job's versions.
type JobVersionsRequest struct {
	JobID string
	Diffs bool
	QueryOptions
}

// JobAllocationsResponse lists a job's allocations.
type JobAllocationsResponse struct {
	Allocations []*AllocListStub
	QueryMeta
}

// JobEvaluationsResponse lists a job's evaluations.
type JobEvaluationsResponse struct {
	Evaluations []*Evaluation
	QueryMeta
}

// JobValidateRequest asks whether a job would be admitted, without
// registering it.
type JobValidateRequest struct {
	Job *Job
	WriteRequest
}

// JobValidateResponse is Nomad's validate answer: an invalid job is not an
// error of the call but a list of its problems.
type JobValidateResponse struct {
	// DriverConfigValidated is true: the servers check each task's config
	// against its driver's schema (drivers themselves run on clients).
	DriverConfigValidated bool
	ValidationErrors      []string
	// Error is the whole refusal as register would give it.
	Error    string
	Warnings string
}

// JobPlanRequest asks for a dry run of a job change.
type JobPlanRequest struct {
	Job            *Job
	Diff           bool
	PolicyOverride bool
	WriteRequest
}

// JobPlanResponse is the dry run: what would change and where.
type JobPlanResponse struct {
	Annotations        *PlanAnnotations
	FailedTGAllocs     map[string]*AllocMetric
	JobModifyIndex     uint64
	CreatedEvals       []*Evaluation
	Diff               *JobDiff
	NextPeriodicLaunch time.Time
	Warnings           string
	WriteMeta
}

// JobRevertRequest reverts a job to an earlier version.
type JobRevertRequest struct {
	JobID               string
	JobVersion          uint64
	EnforcePriorVersion *uint64
	WriteRequest
}

// JobStabilityRequest marks a job version stable or not.
type JobStabilityRequest struct {
	JobID      string
	JobVersion uint64
	Stable     bool
	WriteRequest
}

// JobEvaluateRequest forces a new evaluation of a job.
type JobEvaluateRequest struct {
	JobID       string
	EvalOptions EvalOptions
	WriteRequest
}

// EvalOptions configures a forced evaluation.
type EvalOptions struct {
	ForceReschedule bool
}

// JobDeploymentsResponse lists a job's deployments.
type JobDeploymentsResponse struct {
	Deployments []*Deployment
	QueryMeta
}

// SingleDeploymentResponse answers a lookup of one deployment.
type SingleDeploymentResponse struct {
	Deployment *Deployment
	QueryMeta
}
