package httpapi

import (
	"net/http"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/structs"
)

// maxDispatchBody bounds a dispatch body: a 16 KiB payload is about 22 KB
// in base64, so anything near this size is refused by the server anyway.
const maxDispatchBody = 1 << 20

// jobDispatch serves PUT/POST /v1/job/:id/dispatch with Nomad's
// JobDispatchRequest body ({"JobID", "Payload" (base64), "Meta",
// "IdPrefixTemplate", "Priority"}) and answers with Nomad's
// JobDispatchResponse. The idempotency token may come in the body
// ("IdempotencyToken") or, as Nomad's client sends it, in the
// idempotency_token query parameter; two different ones are refused.
func (s *httpAPI) jobDispatch(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.JobDispatchRequest
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, maxDispatchBody)
	}
	if err := optionalBody(r, &body); err != nil {
		return nil, err
	}
	if err := checkBodyID(r, "JobID", &body.JobID); err != nil {
		return nil, err
	}
	args := structs.JobDispatchRequest{
		JobID: body.JobID, Payload: body.Payload, Meta: body.Meta, IdempotencyToken: body.IdempotencyToken,
		IdPrefixTemplate: body.IdPrefixTemplate, Priority: body.Priority,
	}
	if q := r.URL.Query().Get("idempotency_token"); q != "" {
		if args.IdempotencyToken != "" && args.IdempotencyToken != q {
			return nil, badRequest("idempotency token %q in the body differs from %q in the idempotency_token parameter; send one", args.IdempotencyToken, q)
		}
		args.IdempotencyToken = q
	}
	s.parseWrite(r, &args.WriteRequest)
	var out structs.JobDispatchResponse
	if err := s.call(r, "Job.Dispatch", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return &out, nil
}
