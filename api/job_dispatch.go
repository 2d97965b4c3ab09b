package api

import "errors"

// JobDispatchLaunchSuffix separates a parameterized job's ID from the rest
// of a dispatched child's ID (<parent>/dispatch-<unix seconds>-<8 hex>).
const JobDispatchLaunchSuffix = "/dispatch-"

// DispatchPayloadSizeLimit is the largest payload a dispatch may carry
// (16 KiB), as in Nomad.
const DispatchPayloadSizeLimit = 16 * 1024

// JobDispatchRequest is the body of PUT /v1/job/:id/dispatch, in Nomad's
// shape. Payload is base64 in JSON. IdempotencyToken makes a repeated
// dispatch return the child it created while that child is not dead
// (Nomad's client sends it as the idempotency_token query parameter; the
// agent takes either).
type JobDispatchRequest struct {
	JobID            string
	Payload          []byte            `json:",omitempty"`
	Meta             map[string]string `json:",omitempty"`
	IdempotencyToken string            `json:",omitempty"`
	IdPrefixTemplate string            `json:",omitempty"`
	Priority         int               `json:",omitempty"`
}

// JobDispatchResponse names the dispatched child and the evaluation that
// schedules it. EvalID is empty when the dispatch was answered by an
// earlier child with the same idempotency token.
type JobDispatchResponse struct {
	DispatchedJobID string
	EvalID          string
	EvalCreateIndex uint64
	JobCreateIndex  uint64
	WriteMeta
}

// DispatchOptions are the parameters of a dispatch.
type DispatchOptions struct {
	JobID            string
	Meta             map[string]string
	Payload          []byte
	IdempotencyToken string
	IdPrefixTemplate string
	Priority         int
}

// Dispatch creates an instance of the parameterized job jobID with the
// given meta and payload (PUT /v1/job/:id/dispatch), as Nomad's client's
// Dispatch does.
func (j *Jobs) Dispatch(jobID string, meta map[string]string, payload []byte, idPrefixTemplate string, w *WriteOptions) (*JobDispatchResponse, *WriteMeta, error) {
	return j.DispatchOpts(&DispatchOptions{JobID: jobID, Meta: meta, Payload: payload, IdPrefixTemplate: idPrefixTemplate}, w)
}

// DispatchOpts dispatches with every option, including an idempotency
// token.
func (j *Jobs) DispatchOpts(opts *DispatchOptions, w *WriteOptions) (*JobDispatchResponse, *WriteMeta, error) {
	if opts == nil || opts.JobID == "" {
		return nil, nil, errors.New("dispatch: no job ID given")
	}
	req := &JobDispatchRequest{
		JobID: opts.JobID, Meta: opts.Meta, Payload: opts.Payload,
		IdempotencyToken: opts.IdempotencyToken, IdPrefixTemplate: opts.IdPrefixTemplate, Priority: opts.Priority,
	}
	var out JobDispatchResponse
	wm, err := j.c.put("/v1/job/"+escape(opts.JobID)+"/dispatch", req, &out, w)
	if err != nil {
		return nil, nil, err
	}
	out.WriteMeta = *wm
	return &out, wm, nil
}
