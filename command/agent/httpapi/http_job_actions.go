package httpapi

import (
	"net/http"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/structs"
)

// The job actions: force an evaluation, dry-run a change, revert to an
// earlier version, and mark a version stable. Plan, revert and stable may
// not exist on the server yet; the RPC layer's "can't find method" becomes
// a 501 (see errorStatus).

func (s *httpAPI) jobEvaluate(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.JobEvaluateRequest
	if err := optionalBody(r, &args); err != nil {
		return nil, err
	}
	if err := checkBodyID(r, "JobID", &args.JobID); err != nil {
		return nil, err
	}
	s.parseWrite(r, &args.WriteRequest)
	var out structs.JobRegisterResponse
	if err := s.call(r, "Job.Evaluate", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return &out, nil
}

// jobPlan serves POST /v1/job/:id/plan. Nomad's CLI prints the diff and the
// annotations without checking for null, so both are always objects.
func (s *httpAPI) jobPlan(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.JobPlanRequest
	ignored, err := decodeJobBody(r, &body)
	if err != nil {
		return nil, err
	}
	if body.Job == nil {
		return nil, badRequest("request body has no Job (expected {\"Job\": {...}})")
	}
	if id := r.PathValue("id"); body.Job.ID == nil || *body.Job.ID != id {
		return nil, badRequest("job ID in the body (%s) does not match the ID in the path (%q)", strPtr(body.Job.ID), id)
	}
	job := s.convertJob(r, body.Job, body.WriteRequest)
	args := structs.JobPlanRequest{Job: job, Diff: body.Diff, PolicyOverride: body.PolicyOverride}
	s.parseWrite(r, &args.WriteRequest)
	args.Namespace = job.Namespace
	var out structs.JobPlanResponse
	if err := s.call(r, "Job.Plan", &args, &out); err != nil {
		return nil, err
	}
	if out.Diff == nil {
		out.Diff = &structs.JobDiff{Type: structs.DiffTypeNone, ID: job.ID}
	}
	if out.Annotations == nil {
		out.Annotations = &structs.PlanAnnotations{}
	}
	if out.Annotations.DesiredTGUpdates == nil {
		out.Annotations.DesiredTGUpdates = map[string]*structs.DesiredUpdates{}
	}
	if out.FailedTGAllocs == nil {
		out.FailedTGAllocs = map[string]*structs.AllocMetric{}
	}
	out.Warnings = joinWarnings(out.Warnings, ignoredWarning(ignored))
	setIndex(w, out.Index)
	return &out, nil
}

func (s *httpAPI) jobRevert(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.JobRevertRequest
	if err := decodeBody(r, &args); err != nil {
		return nil, err
	}
	if err := checkBodyID(r, "JobID", &args.JobID); err != nil {
		return nil, err
	}
	s.parseWrite(r, &args.WriteRequest)
	var out structs.JobRegisterResponse
	if err := s.call(r, "Job.Revert", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return &out, nil
}

// jobStable answers {"Index": n}, the shape of Nomad's
// JobStabilityResponse.
func (s *httpAPI) jobStable(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.JobStabilityRequest
	if err := decodeBody(r, &args); err != nil {
		return nil, err
	}
	if err := checkBodyID(r, "JobID", &args.JobID); err != nil {
		return nil, err
	}
	s.parseWrite(r, &args.WriteRequest)
	var out structs.GenericResponse
	if err := s.call(r, "Job.Stable", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return &out, nil
}

// jobPeriodicForce serves PUT /v1/job/:id/periodic/force: it launches a
// periodic job's child now and answers the child's evaluation, as
// {"EvalID": ..., "EvalCreateIndex": ..., "Index": ...}.
func (s *httpAPI) jobPeriodicForce(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.PeriodicForceRequest{JobID: r.PathValue("id")}
	s.parseWrite(r, &args.WriteRequest)
	var out structs.PeriodicForceResponse
	if err := s.call(r, "Job.PeriodicForce", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return &out, nil
}
