package httpapi

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
	args := evalListRequest(r)
	return serveList(s, w, r, &args.QueryOptions,
		func() ([]*structs.Evaluation, structs.QueryMeta, error) { return s.allEvals(r, &args) },
		func(e *structs.Evaluation) string { return e.ID })
}

// evalListRequest takes Nomad's evaluation filters, ?job= and ?status=.
func evalListRequest(r *http.Request) structs.EvalListRequest {
	return structs.EvalListRequest{
		FilterJobID:      r.URL.Query().Get("job"),
		FilterEvalStatus: r.URL.Query().Get("status"),
	}
}

// allEvals reads every page of Eval.List.
func (s *httpAPI) allEvals(r *http.Request, args *structs.EvalListRequest) ([]*structs.Evaluation, structs.QueryMeta, error) {
	return followPages(&args.QueryOptions, func() ([]*structs.Evaluation, *structs.QueryMeta, error) {
		var out structs.EvalListResponse
		err := s.call(r, "Eval.List", args, &out)
		return out.Evaluations, &out.QueryMeta, err
	})
}

// evalsCount answers Nomad's {"Count": n} for the evaluations the same
// query would list (?job=, ?status=, ?prefix=, ?filter=), unpaged.
func (s *httpAPI) evalsCount(w http.ResponseWriter, r *http.Request) (any, error) {
	args := evalListRequest(r)
	filter, err := s.parseListQuery(r, &args.QueryOptions)
	if err != nil {
		return nil, err
	}
	evals, meta, err := s.allEvals(r, &args)
	if err != nil {
		return nil, err
	}
	matched, err := filterList(filter, evals)
	if err != nil {
		return nil, err
	}
	setMeta(w, &meta)
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
	return serveAllPages(w, &args.QueryOptions, func() ([]*structs.AllocListStub, *structs.QueryMeta, error) {
		var out structs.EvalAllocationsResponse
		err := s.call(r, "Eval.Allocations", &args, &out)
		return out.Allocations, &out.QueryMeta, err
	})
}
