package httpapi

import (
	"net/http"
	"strconv"

	"github.com/drover-sched/drover/structs"
)

// schedulerGetConfig answers GET /v1/operator/scheduler/configuration in
// Nomad's shape: {"SchedulerConfig": {...}, "Index", "LastContact",
// "KnownLeader", "NextToken"}, with the X-Nomad-* headers of every read.
// It takes ?index= and ?wait= like the other blocking reads.
func (s *httpAPI) schedulerGetConfig(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.GenericRequest
	var out structs.SchedulerConfigurationResponse
	if err := s.read(w, r, &args.QueryOptions, "Operator.SchedulerGetConfiguration", &args, &out, &out.QueryMeta); err != nil {
		return nil, err
	}
	return &out, nil
}

// schedulerConfigBody is the configuration a PUT or POST carries, with
// Nomad's field names. The indexes a client sends back with it are
// ignored: a check-and-set names its index in ?cas=, as in Nomad.
type schedulerConfigBody struct {
	SchedulerAlgorithm            string
	PreemptionConfig              structs.PreemptionConfig
	MemoryOversubscriptionEnabled bool
	RejectJobRegistration         bool
	PauseEvalBroker               bool
}

// schedulerSetConfig answers PUT or POST /v1/operator/scheduler/configuration:
// it replaces the whole configuration, or with ?cas=<index> only if the
// stored configuration's ModifyIndex is still index (0: never set), and
// answers {"Updated": bool, "Index": n}. A malformed body, cas or value is
// a 400 that changes nothing.
func (s *httpAPI) schedulerSetConfig(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.SchedulerSetConfigRequest
	s.parseWrite(r, &args.WriteRequest)
	var body schedulerConfigBody
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	args.Config = structs.SchedulerConfiguration{
		SchedulerAlgorithm:            body.SchedulerAlgorithm,
		PreemptionConfig:              body.PreemptionConfig,
		MemoryOversubscriptionEnabled: body.MemoryOversubscriptionEnabled,
		RejectJobRegistration:         body.RejectJobRegistration,
		PauseEvalBroker:               body.PauseEvalBroker,
	}
	if err := args.Config.Validate(); err != nil {
		return nil, badRequest("scheduler configuration: %v", err)
	}
	if q := r.URL.Query(); q.Has("cas") {
		idx, err := strconv.ParseUint(q.Get("cas"), 10, 64)
		if err != nil {
			return nil, badRequest("invalid cas %q: must be the non-negative ModifyIndex the configuration must still have (0: never set)", q.Get("cas"))
		}
		args.CAS = true
		args.Config.ModifyIndex = idx
	}
	var out structs.SchedulerSetConfigurationResponse
	if err := s.call(r, "Operator.SchedulerSetConfiguration", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return &out, nil
}
