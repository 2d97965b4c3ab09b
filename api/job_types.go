package api

// Job statuses, as the servers report them.
const (
	JobStatusPending = "pending"
	JobStatusRunning = "running"
	JobStatusDead    = "dead"
)

// JobListStub is one row of GET /v1/jobs: enough to list jobs without
// sending every job's full definition.
type JobListStub struct {
	ID                string
	ParentID          string
	Name              string
	Namespace         string `json:",omitempty"`
	Datacenters       []string
	NodePool          string
	Type              string
	Priority          int
	Periodic          bool
	ParameterizedJob  bool
	Stop              bool
	Status            string
	StatusDescription string
	JobSummary        *JobSummary
	CreateIndex       uint64
	ModifyIndex       uint64
	JobModifyIndex    uint64
	SubmitTime        int64
	Meta              map[string]string `json:",omitempty"`
}

// JobSummary counts a job's allocations by client status, per group.
type JobSummary struct {
	JobID       string
	Namespace   string
	Summary     map[string]TaskGroupSummary
	Children    *JobChildrenSummary
	CreateIndex uint64
	ModifyIndex uint64
}

// TaskGroupSummary is one group's allocation counts. Queued counts
// placements the scheduler could not make yet.
type TaskGroupSummary struct {
	Queued   int
	Complete int
	Failed   int
	Running  int
	Starting int
	Lost     int
	Unknown  int
}

// JobChildrenSummary counts the children of a periodic or parameterized job.
type JobChildrenSummary struct {
	Pending int64
	Running int64
	Dead    int64
}

// JobVersionsResponse answers GET /v1/job/:id/versions, newest version
// first. With diffs asked for, Diffs[i] is the change from Versions[i+1] to
// Versions[i].
type JobVersionsResponse struct {
	Versions []*Job
	Diffs    []*JobDiff
	QueryMeta
}

// RegisterOptions change how Jobs().RegisterOpts registers a job.
type RegisterOptions struct {
	// EnforceIndex with ModifyIndex makes the register succeed only if the
	// job's JobModifyIndex is still ModifyIndex (0: the job must not
	// exist). `job run -check-index` uses it.
	EnforceIndex bool
	ModifyIndex  uint64

	PolicyOverride bool

	// PreserveCounts keeps the running version's group counts.
	PreserveCounts bool

	// EvalPriority overrides the priority of the evaluation created.
	EvalPriority int
}

// JobRevertRequest is the body of PUT /v1/job/:id/revert.
type JobRevertRequest struct {
	JobID      string
	JobVersion uint64

	// EnforcePriorVersion, if set, makes the revert succeed only if the
	// current version is this one.
	EnforcePriorVersion *uint64
	WriteRequest
}

// JobStabilityRequest is the body of PUT /v1/job/:id/stable.
type JobStabilityRequest struct {
	JobID      string
	JobVersion uint64
	Stable     bool
	WriteRequest
}

// JobStabilityResponse answers PUT /v1/job/:id/stable.
type JobStabilityResponse struct {
	JobModifyIndex uint64
	WriteMeta
}
