package httpapi

import (
	"errors"
	"net/http"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/structs"
)

// /v1/job/:id/scale: GET reads the job's scaling status, PUT or POST
// scales one of its groups, in Nomad's request and answer shapes, so
// Nomad's client and autoscalers work against Drover unchanged.

// jobScaleStatus serves GET /v1/job/:id/scale, a blocking query; a job
// that does not exist is a 404.
func (s *httpAPI) jobScaleStatus(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.JobScaleStatusRequest{JobID: r.PathValue("id")}
	var out structs.JobScaleStatusResponse
	if err := s.read(w, r, &args.QueryOptions, "Job.ScaleStatus", &args, &out, &out.QueryMeta); err != nil {
		return nil, err
	}
	if out.JobScaleStatus == nil {
		return nil, notFound("job %q not found", args.JobID)
	}
	for _, tg := range out.JobScaleStatus.TaskGroups {
		if tg.Events == nil {
			tg.Events = []*structs.ScalingEvent{}
		}
	}
	return out.JobScaleStatus, nil
}

// jobScale serves PUT and POST /v1/job/:id/scale with Nomad's
// ScalingRequest body. The checks that need no job (a group is named, a
// repeated job ID matches the path) are made here so they answer 400
// before any RPC; the server checks the rest.
func (s *httpAPI) jobScale(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.ScalingRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	if body.Target[api.ScalingTargetGroup] == "" {
		return nil, badRequest(`Target.Group is missing: name the task group to scale, as in {"Count": 3, "Target": {"Group": "web"}}`)
	}
	if job := body.Target[api.ScalingTargetJob]; job != "" && job != id {
		return nil, badRequest("Target.Job %q does not match the job in the path, %q", job, id)
	}
	if body.Count != nil && *body.Count < 0 {
		return nil, badRequest("Count must be >= 0, got %d", *body.Count)
	}
	args := structs.JobScaleRequest{
		JobID: id, Target: body.Target, Count: body.Count, Message: body.Message, Error: body.Error,
		Meta: body.Meta, PolicyOverride: body.PolicyOverride, JobModifyIndex: body.JobModifyIndex,
	}
	s.parseWrite(r, &args.WriteRequest)
	var out structs.JobRegisterResponse
	if err := s.call(r, "Job.Scale", &args, &out); err != nil {
		// Tools match Nomad's exact text for this refusal, so it is sent
		// bare, without Drover's "bad request" prefix.
		if errors.Is(err, structs.ErrScalingBlocked) {
			return nil, badRequest("%s", structs.ErrScalingBlocked)
		}
		return nil, err
	}
	setIndex(w, out.Index)
	return &out, nil
}
