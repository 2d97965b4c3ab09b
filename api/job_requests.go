package api

// JobRegisterRequest is the body of PUT /v1/jobs and POST /v1/job/:id.
type JobRegisterRequest struct {
	Job *Job

	// EnforceIndex makes the register conditional: it succeeds only if the
	// job's current JobModifyIndex equals JobModifyIndex (0 means "the job
	// must not exist yet"). This is how two users editing the same job avoid
	// overwriting each other.
	EnforceIndex   bool   `json:",omitempty"`
	JobModifyIndex uint64 `json:",omitempty"`

	// PolicyOverride overrides soft-mandatory policy failures.
	PolicyOverride bool `json:",omitempty"`

	// PreserveCounts keeps the group counts of the running version, so that
	// re-submitting a job file does not undo scaling done since.
	PreserveCounts bool `json:",omitempty"`

	// PreserveResources keeps the task resources of the running version.
	PreserveResources bool `json:",omitempty"`

	// EvalPriority, when set (1-100), is the priority of the evaluation the
	// register creates, without changing the job's own priority.
	EvalPriority int `json:",omitempty"`

	WriteRequest
}

// JobRegisterResponse answers a register: the evaluation created for the new
// version and the raft indexes that recorded it.
type JobRegisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64

	// Warnings lists non-fatal problems with the job, such as deprecated
	// fields, in a form meant for people.
	Warnings string

	QueryMeta
}

// JobDeregisterResponse answers DELETE /v1/job/:id.
type JobDeregisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	QueryMeta
}

// JobValidateRequest is the body of PUT /v1/validate/job.
type JobValidateRequest struct {
	Job *Job
	WriteRequest
}

// JobValidateResponse lists what is wrong with a job without registering it.
type JobValidateResponse struct {
	// DriverConfigValidated says whether task driver configs were checked
	// too, which needs the drivers and so is not always possible.
	DriverConfigValidated bool

	// ValidationErrors has one entry per problem found.
	ValidationErrors []string

	// Error is all problems as one string.
	Error string

	// Warnings lists non-fatal problems.
	Warnings string
}

// JobPlanRequest is the body of PUT /v1/job/:id/plan: a dry run of a
// register.
type JobPlanRequest struct {
	Job            *Job
	Diff           bool
	PolicyOverride bool
	WriteRequest
}

// JobsParseRequest is the body of PUT /v1/jobs/parse, which turns a job file
// into a Job on the server, for clients that do not link the parser.
type JobsParseRequest struct {
	// JobHCL is the job file's text.
	JobHCL string

	// Variables is read as the content of a variables file.
	Variables string

	// Canonicalize asks the server to fill in defaults before answering.
	Canonicalize bool
}
