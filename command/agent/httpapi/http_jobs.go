package httpapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/structs"
)

func (s *httpAPI) routeJobs(mux *http.ServeMux) {
	s.handle(mux, "/v1/jobs", s.jobsList, read...)
	s.handleJob(mux, "/v1/jobs", s.jobRegister, write...)
	s.handleJob(mux, "/v1/jobs/parse", s.jobsParse, write...)
	s.handleJob(mux, "/v1/validate/job", s.jobValidate, write...)
	s.handle(mux, "/v1/job/{id}", s.jobGet, read...)
	s.handleJob(mux, "/v1/job/{id}", s.jobRegister, write...)
	s.handle(mux, "/v1/job/{id}", s.jobDeregister, http.MethodDelete)
	s.handle(mux, "/v1/job/{id}/allocations", s.jobAllocations, read...)
	s.handle(mux, "/v1/job/{id}/evaluations", s.jobEvaluations, read...)
	s.handle(mux, "/v1/job/{id}/summary", s.jobSummary, read...)
	s.handle(mux, "/v1/job/{id}/versions", s.jobVersions, read...)
	s.handle(mux, "/v1/job/{id}/deployments", s.jobDeployments, read...)
	s.handle(mux, "/v1/job/{id}/deployment", s.jobLatestDeployment, read...)
	s.handle(mux, "/v1/job/{id}/evaluate", s.jobEvaluate, write...)
	s.handleJob(mux, "/v1/job/{id}/plan", s.jobPlan, write...)
	s.handle(mux, "/v1/job/{id}/revert", s.jobRevert, write...)
	s.handle(mux, "/v1/job/{id}/stable", s.jobStable, write...)
	s.handle(mux, "/v1/job/{id}/periodic/force", s.jobPeriodicForce, write...)
	s.handle(mux, "/v1/job/{id}/scale", s.jobScaleStatus, read...)
	s.handle(mux, "/v1/job/{id}/scale", s.jobScale, write...)
	s.handle(mux, "/v1/job/{id}/dispatch", s.jobDispatch, write...)
}

func (s *httpAPI) jobsList(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.JobListRequest
	return serveList(s, w, r, &args.QueryOptions,
		func() ([]*structs.JobListStub, structs.QueryMeta, error) { return s.allJobs(r, &args) },
		func(j *structs.JobListStub) string { return j.ID })
}

// jobRegister serves PUT /v1/jobs and PUT /v1/job/:id: the body is Nomad's
// JobRegisterRequest with an api.Job, which is converted here and admitted
// (canonicalized, validated) by the server: a bad job is a 400 naming its
// fields.
func (s *httpAPI) jobRegister(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.JobRegisterRequest
	ignored, err := decodeJobBody(r, &body)
	if err != nil {
		return nil, err
	}
	if body.Job == nil {
		return nil, badRequest("request body has no Job (expected {\"Job\": {...}})")
	}
	if id := r.PathValue("id"); id != "" && (body.Job.ID == nil || *body.Job.ID != id) {
		return nil, badRequest("job ID in the body (%s) does not match the ID in the path (%q)", strPtr(body.Job.ID), id)
	}
	args := structs.JobRegisterRequest{
		EnforceIndex:   body.EnforceIndex,
		JobModifyIndex: body.JobModifyIndex,
		PreserveCounts: body.PreserveCounts,
		PolicyOverride: body.PolicyOverride,
	}
	s.parseWrite(r, &args.WriteRequest)
	args.Job = s.convertJob(r, body.Job, body.WriteRequest)
	args.Namespace = args.Job.Namespace
	var out structs.JobRegisterResponse
	if err := s.call(r, "Job.Register", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	out.Warnings = joinWarnings(out.Warnings, ignoredWarning(ignored))
	return &out, nil
}

// convertJob turns a submitted api.Job into the server's form: its
// namespace and region default to the request's, as in Nomad, and the api
// form is canonicalized (defaults filled, job-level blocks merged into the
// groups), which the conversion expects. The server's form is
// canonicalized and validated by the server alone (nomad's admitJob).
func (s *httpAPI) convertJob(r *http.Request, j *api.Job, wr api.WriteRequest) *structs.Job {
	if j.Namespace == nil || *j.Namespace == "" {
		ns := wr.Namespace
		if ns == "" {
			ns = s.namespace(r)
		}
		j.Namespace = &ns
	}
	if j.Region == nil || *j.Region == "" {
		reg := wr.Region
		if reg == "" {
			reg = s.region(r)
		}
		j.Region = &reg
	}
	j.Canonicalize()
	return ApiJobToStructJob(j)
}

// jobValidate serves PUT /v1/validate/job: it checks a job as a register
// would, without registering it. Like Nomad it answers 200 for an invalid
// job, listing the problems; only a body without a job is a 400.
// DriverConfigValidated is true as in Nomad, whose servers do not run
// drivers either: task configs are checked when a client starts the task.
// It needs read-job in the job's namespace, as in Nomad.
func (s *httpAPI) jobValidate(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.JobValidateRequest
	ignored, err := decodeJobBody(r, &body)
	if err != nil {
		return nil, err
	}
	if body.Job == nil {
		if _, err := s.allowNamespaceOp(r, s.namespace(r), acl.NamespaceCapabilityReadJob); err != nil {
			return nil, err
		}
		return nil, badRequest("request body has no Job (expected {\"Job\": {...}})")
	}
	args := structs.JobValidateRequest{Job: s.convertJob(r, body.Job, body.WriteRequest)}
	s.parseWrite(r, &args.WriteRequest)
	args.Namespace = args.Job.Namespace
	var out structs.JobValidateResponse
	if err := s.call(r, "Job.Validate", &args, &out); err != nil {
		if !isMissingMethod(err) {
			return nil, err
		}
		// A leader of an earlier release, in a rolling upgrade, has no
		// Job.Validate: the job is admitted here as the server admits it.
		if out, err = s.validateHere(r, args.Job); err != nil {
			return nil, err
		}
	}
	return &api.JobValidateResponse{
		DriverConfigValidated: out.DriverConfigValidated, ValidationErrors: nonNil(out.ValidationErrors),
		Error: out.Error, Warnings: joinWarnings(out.Warnings, ignoredWarning(ignored)),
	}, nil
}

// validateHere answers a validate request without the server's
// Job.Validate, through the same admission (nomad.CanonicalJob) and the
// same read-job check, less the server's size limits.
func (s *httpAPI) validateHere(r *http.Request, job *structs.Job) (structs.JobValidateResponse, error) {
	if _, err := s.allowNamespaceOp(r, job.Namespace, acl.NamespaceCapabilityReadJob); err != nil {
		return structs.JobValidateResponse{}, err
	}
	_, err := nomad.CanonicalJob(job, job.Namespace)
	return nomad.ValidationAnswer(err), nil
}

// jobsParse serves POST /v1/jobs/parse: a job file in, its api.Job out.
// It needs parse-job (or read-job or submit-job, which Nomad also
// accepts) in the request's namespace, checked before the body is read.
func (s *httpAPI) jobsParse(w http.ResponseWriter, r *http.Request) (any, error) {
	if _, err := s.allowNamespaceOp(r, s.namespace(r), acl.NamespaceCapabilityParseJob,
		acl.NamespaceCapabilityReadJob, acl.NamespaceCapabilitySubmitJob); err != nil {
		return nil, err
	}
	var body api.JobsParseRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if strings.TrimSpace(body.JobHCL) == "" {
		return nil, badRequest("JobHCL is empty")
	}
	if limit := s.jobSourceLimit(); int64(len(body.JobHCL)) > limit {
		return nil, &codedError{code: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf(
			"JobHCL is %d bytes, over the %d bytes server.job_max_source_size allows; make the job file smaller or raise the setting", len(body.JobHCL), limit)}
	}
	// Evaluated in a child process with a heap limit and a deadline (see
	// job_parse_child.go): a job file is a program, and a small one can
	// take gigabytes.
	job, err := s.jobParser().parse(r.Context(), body.JobHCL, body.Variables)
	if err != nil {
		return nil, err
	}
	if body.Canonicalize {
		job.Canonicalize()
	}
	return job, nil
}

func (s *httpAPI) jobSpecific(r *http.Request) (structs.JobSpecificRequest, error) {
	args := structs.JobSpecificRequest{JobID: r.PathValue("id")}
	if err := s.parseQuery(r, &args.QueryOptions); err != nil {
		return args, err
	}
	all, err := boolParam(r, "all")
	args.All = all
	return args, err
}

func (s *httpAPI) jobGet(w http.ResponseWriter, r *http.Request) (any, error) {
	args, err := s.jobSpecific(r)
	if err != nil {
		return nil, err
	}
	var out structs.SingleJobResponse
	if err := s.call(r, "Job.GetJob", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Job == nil {
		return nil, notFound("job %q not found", args.JobID)
	}
	return out.Job, nil
}

func (s *httpAPI) jobDeregister(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.JobDeregisterRequest{JobID: r.PathValue("id")}
	s.parseWrite(r, &args.WriteRequest)
	var err error
	if args.Purge, err = boolParam(r, "purge"); err != nil {
		return nil, err
	}
	if args.Global, err = boolParam(r, "global"); err != nil {
		return nil, err
	}
	var out structs.JobDeregisterResponse
	if err := s.call(r, "Job.Deregister", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return &out, nil
}

func (s *httpAPI) jobAllocations(w http.ResponseWriter, r *http.Request) (any, error) {
	args, err := s.jobSpecific(r)
	if err != nil {
		return nil, err
	}
	return serveAllPages(w, &args.QueryOptions, func() ([]*structs.AllocListStub, *structs.QueryMeta, error) {
		var out structs.JobAllocationsResponse
		err := s.call(r, "Job.Allocations", &args, &out)
		return out.Allocations, &out.QueryMeta, err
	})
}

func (s *httpAPI) jobEvaluations(w http.ResponseWriter, r *http.Request) (any, error) {
	args, err := s.jobSpecific(r)
	if err != nil {
		return nil, err
	}
	return serveAllPages(w, &args.QueryOptions, func() ([]*structs.Evaluation, *structs.QueryMeta, error) {
		var out structs.JobEvaluationsResponse
		err := s.call(r, "Job.Evaluations", &args, &out)
		return out.Evaluations, &out.QueryMeta, err
	})
}

func (s *httpAPI) jobSummary(w http.ResponseWriter, r *http.Request) (any, error) {
	args, err := s.jobSpecific(r)
	if err != nil {
		return nil, err
	}
	var out structs.JobSummaryResponse
	if err := s.call(r, "Job.Summary", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.JobSummary == nil {
		return nil, notFound("job %q not found", args.JobID)
	}
	return out.JobSummary, nil
}

func (s *httpAPI) jobVersions(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.JobVersionsRequest{JobID: r.PathValue("id")}
	if err := s.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var err error
	if args.Diffs, err = boolParam(r, "diffs"); err != nil {
		return nil, err
	}
	var out structs.JobVersionsResponse
	out.Versions, out.QueryMeta, err = followPages(&args.QueryOptions, func() ([]*structs.Job, *structs.QueryMeta, error) {
		var page structs.JobVersionsResponse
		err := s.call(r, "Job.GetJobVersions", &args, &page)
		out.Diffs = append(out.Diffs, page.Diffs...)
		return page.Versions, &page.QueryMeta, err
	})
	if err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if len(out.Versions) == 0 {
		return nil, notFound("job %q not found", args.JobID)
	}
	if args.Diffs && len(out.Diffs) == 0 {
		diffs, err := versionDiffs(out.Versions)
		if err != nil {
			return nil, err
		}
		out.Diffs = diffs
	}
	return &out, nil
}

// versionDiffs computes what Nomad answers for ?diffs=true when the server
// has not: for versions newest first, Diffs[i] is the change from
// versions[i+1] to versions[i], with unchanged fields for context.
func versionDiffs(versions []*structs.Job) ([]*structs.JobDiff, error) {
	var diffs []*structs.JobDiff
	for i := 0; i+1 < len(versions); i++ {
		d, err := versions[i+1].Diff(versions[i], true)
		if err != nil {
			return nil, fmt.Errorf("diffing job versions %d and %d: %w", versions[i+1].Version, versions[i].Version, err)
		}
		diffs = append(diffs, d)
	}
	return diffs, nil
}

func (s *httpAPI) jobDeployments(w http.ResponseWriter, r *http.Request) (any, error) {
	args, err := s.jobSpecific(r)
	if err != nil {
		return nil, err
	}
	return serveAllPages(w, &args.QueryOptions, func() ([]*structs.Deployment, *structs.QueryMeta, error) {
		var out structs.JobDeploymentsResponse
		err := s.call(r, "Job.Deployments", &args, &out)
		return out.Deployments, &out.QueryMeta, err
	})
}

// jobLatestDeployment answers `null` when the job has no deployment, as
// Nomad does.
func (s *httpAPI) jobLatestDeployment(w http.ResponseWriter, r *http.Request) (any, error) {
	args, err := s.jobSpecific(r)
	if err != nil {
		return nil, err
	}
	var out structs.SingleDeploymentResponse
	if err := s.call(r, "Job.LatestDeployment", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return out.Deployment, nil
}

// nonNil makes a nil list encode as [] rather than null: Nomad never sends
// null for a list, and its CLI ranges over what it gets.
func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}

func strPtr(s *string) string {
	if s == nil {
		return "missing"
	}
	return "\"" + *s + "\""
}
