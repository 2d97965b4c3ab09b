package api

import (
	"errors"
	"strconv"
)

// Jobs is the /v1/jobs and /v1/job/:id family of endpoints.
type Jobs struct{ c *Client }

// Jobs returns the job endpoints.
func (c *Client) Jobs() *Jobs { return &Jobs{c: c} }

// List lists jobs (GET /v1/jobs).
func (j *Jobs) List(q *QueryOptions) ([]*JobListStub, *QueryMeta, error) {
	return queryList[*JobListStub](j.c, "/v1/jobs", q)
}

// PrefixList lists jobs whose ID starts with prefix.
func (j *Jobs) PrefixList(prefix string) ([]*JobListStub, *QueryMeta, error) {
	return j.List(&QueryOptions{Prefix: prefix})
}

// Info reads one job (GET /v1/job/:id).
func (j *Jobs) Info(jobID string, q *QueryOptions) (*Job, *QueryMeta, error) {
	return queryOne[Job](j.c, "/v1/job/"+escape(jobID), q)
}

// Register registers a new job or a new version of one (PUT /v1/jobs).
func (j *Jobs) Register(job *Job, w *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	return j.RegisterOpts(job, nil, w)
}

// EnforceRegister registers job only if its JobModifyIndex is still
// modifyIndex; 0 means the job must not exist yet.
func (j *Jobs) EnforceRegister(job *Job, modifyIndex uint64, w *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	return j.RegisterOpts(job, &RegisterOptions{EnforceIndex: true, ModifyIndex: modifyIndex}, w)
}

// RegisterOpts registers job with the given options.
func (j *Jobs) RegisterOpts(job *Job, opts *RegisterOptions, w *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	if job == nil {
		return nil, nil, errors.New("no job to register")
	}
	req := &JobRegisterRequest{Job: job}
	if opts != nil {
		req.EnforceIndex = opts.EnforceIndex
		req.JobModifyIndex = opts.ModifyIndex
		req.PolicyOverride = opts.PolicyOverride
		req.PreserveCounts = opts.PreserveCounts
		req.EvalPriority = opts.EvalPriority
	}
	return putOne[JobRegisterResponse](j.c, "/v1/jobs", req, w)
}

// Deregister stops a job (DELETE /v1/job/:id). With purge the job is also
// removed from the state once its allocations have stopped. It returns the
// ID of the evaluation that stops the allocations.
func (j *Jobs) Deregister(jobID string, purge bool, w *WriteOptions) (string, *WriteMeta, error) {
	w = withParam(w, "purge", strconv.FormatBool(purge))
	var out JobDeregisterResponse
	wm, err := j.c.delete("/v1/job/"+escape(jobID), &out, w)
	if err != nil {
		return "", nil, err
	}
	return out.EvalID, wm, nil
}

// Plan dry-runs a register (PUT /v1/job/:id/plan). With diff, the answer
// includes the structured change from the running version.
func (j *Jobs) Plan(job *Job, diff bool, w *WriteOptions) (*JobPlanResponse, *WriteMeta, error) {
	if job == nil || job.ID == nil || *job.ID == "" {
		return nil, nil, errors.New("job to plan has no ID")
	}
	req := &JobPlanRequest{Job: job, Diff: diff}
	return putOne[JobPlanResponse](j.c, "/v1/job/"+escape(*job.ID)+"/plan", req, w)
}

// Allocations lists a job's allocations. Without all, allocations left from
// an earlier job with the same ID (one purged and registered again) are
// left out.
func (j *Jobs) Allocations(jobID string, all bool, q *QueryOptions) ([]*AllocationListStub, *QueryMeta, error) {
	if all {
		q = withParams(q, "all", "true")
	}
	return queryList[*AllocationListStub](j.c, "/v1/job/"+escape(jobID)+"/allocations", q)
}

// Evaluations lists a job's evaluations.
func (j *Jobs) Evaluations(jobID string, q *QueryOptions) ([]*Evaluation, *QueryMeta, error) {
	return queryList[*Evaluation](j.c, "/v1/job/"+escape(jobID)+"/evaluations", q)
}

// Summary reads a job's allocation counts per group.
func (j *Jobs) Summary(jobID string, q *QueryOptions) (*JobSummary, *QueryMeta, error) {
	return queryOne[JobSummary](j.c, "/v1/job/"+escape(jobID)+"/summary", q)
}

// Versions lists a job's versions, newest first, and with diffs the change
// each version made to the one before.
func (j *Jobs) Versions(jobID string, diffs bool, q *QueryOptions) ([]*Job, []*JobDiff, *QueryMeta, error) {
	if diffs {
		q = withParams(q, "diffs", "true")
	}
	var out JobVersionsResponse
	qm, err := j.c.query("/v1/job/"+escape(jobID)+"/versions", &out, q)
	if err != nil {
		return nil, nil, nil, err
	}
	return out.Versions, out.Diffs, qm, nil
}

// Revert registers an earlier version of a job again as a new version.
// enforcePriorVersion, if set, makes it fail unless the current version is
// that one.
func (j *Jobs) Revert(jobID string, version uint64, enforcePriorVersion *uint64, w *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	req := &JobRevertRequest{JobID: jobID, JobVersion: version, EnforcePriorVersion: enforcePriorVersion}
	return putOne[JobRegisterResponse](j.c, "/v1/job/"+escape(jobID)+"/revert", req, w)
}

// Stable marks a version of a job stable or not; auto-revert goes back to
// the newest stable version.
func (j *Jobs) Stable(jobID string, version uint64, stable bool, w *WriteOptions) (*JobStabilityResponse, *WriteMeta, error) {
	req := &JobStabilityRequest{JobID: jobID, JobVersion: version, Stable: stable}
	return putOne[JobStabilityResponse](j.c, "/v1/job/"+escape(jobID)+"/stable", req, w)
}

// Deployments lists a job's deployments. With all, deployments of an
// earlier job with the same ID (purged and registered again) are included.
func (j *Jobs) Deployments(jobID string, all bool, q *QueryOptions) ([]*Deployment, *QueryMeta, error) {
	if all {
		q = withParams(q, "all", "true")
	}
	return queryList[*Deployment](j.c, "/v1/job/"+escape(jobID)+"/deployments", q)
}

// LatestDeployment reads a job's newest deployment; nil if it has none.
func (j *Jobs) LatestDeployment(jobID string, q *QueryOptions) (*Deployment, *QueryMeta, error) {
	var out *Deployment
	qm, err := j.c.query("/v1/job/"+escape(jobID)+"/deployment", &out, q)
	return out, qm, err
}

// ParseHCL has the server parse a job file (PUT /v1/jobs/parse), for callers
// that do not link the jobspec parser.
func (j *Jobs) ParseHCL(jobHCL string, canonicalize bool) (*Job, error) {
	return j.ParseHCLOpts(&JobsParseRequest{JobHCL: jobHCL, Canonicalize: canonicalize})
}

// ParseHCLOpts is ParseHCL with variables.
func (j *Jobs) ParseHCLOpts(req *JobsParseRequest) (*Job, error) {
	var out Job
	if _, err := j.c.put("/v1/jobs/parse", req, &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// Validate has the server check a job without registering it
// (PUT /v1/validate/job).
func (j *Jobs) Validate(job *Job, w *WriteOptions) (*JobValidateResponse, *WriteMeta, error) {
	return putOne[JobValidateResponse](j.c, "/v1/validate/job", &JobValidateRequest{Job: job}, w)
}
