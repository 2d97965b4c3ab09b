package agent

import (
	"net/http"

	"github.com/drover-sched/drover/structs"
)

func (s *httpAPI) routeEvals(mux *http.ServeMux) {
	s.handle(mux, "/v1/evaluations", s.evalsList, read...)
	s.handle(mux, "/v1/evaluations/count", s.evalsCount, read...)
	s.handle(mux, "/v1/evaluation/{id}", s.evalGet, read...)
	s.handle(mux, "/v1/evaluation/{id}/allocations", s.evalAllocations, read...)
}

// evalsList takes Nomad's filters ?job= and ?status=.
func (s *httpAPI) evalsList(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.EvalListRequest{
		FilterJobID:      r.URL.Query().Get("job"),
		FilterEvalStatus: r.URL.Query().Get("status"),
	}
	filter, err := s.parseListQuery(r, &args.QueryOptions)
	if err != nil {
		return nil, err
	}
	var out structs.EvalListResponse
	if err := s.call(r, "Eval.List", &args, &out); err != nil {
		return nil, err
	}
	if out.Evaluations, err = paginate(&args.QueryOptions, &out.QueryMeta, filter, out.Evaluations, func(e *structs.Evaluation) string { return e.ID }); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return nonNil(out.Evaluations), nil
}

// evalsCount answers Nomad's {"Count": n} for the evaluations the same
// query would list (?job=, ?status=, ?prefix=, ?filter=), unpaged.
func (s *httpAPI) evalsCount(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.EvalListRequest{
		FilterJobID:      r.URL.Query().Get("job"),
		FilterEvalStatus: r.URL.Query().Get("status"),
	}
	filter, err := s.parseListQuery(r, &args.QueryOptions)
	if err != nil {
		return nil, err
	}
	var out structs.EvalListResponse
	if err := s.call(r, "Eval.List", &args, &out); err != nil {
		return nil, err
	}
	matched, err := filterList(filter, out.Evaluations)
	if err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return &struct{ Count int }{len(matched)}, nil
}

func (s *httpAPI) evalGet(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.EvalSpecificRequest{EvalID: r.PathValue("id")}
	if err := s.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var err error
	if args.IncludeRelated, err = boolParam(r, "related"); err != nil {
		return nil, err
	}
	var out structs.SingleEvalResponse
	if err := s.call(r, "Eval.GetEval", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Eval == nil {
		return nil, notFound("evaluation %q not found", args.EvalID)
	}
	return out.Eval, nil
}

func (s *httpAPI) evalAllocations(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.EvalSpecificRequest{EvalID: r.PathValue("id")}
	if err := s.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.EvalAllocationsResponse
	if err := s.call(r, "Eval.Allocations", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return nonNil(out.Allocations), nil
}
