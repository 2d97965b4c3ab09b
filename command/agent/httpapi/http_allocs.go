package httpapi

import (
	"net/http"

	"github.com/drover-sched/drover/structs"
)

func (s *httpAPI) routeAllocs(mux *http.ServeMux) {
	s.handle(mux, "/v1/allocations", s.allocsList, read...)
	s.handle(mux, "/v1/allocation/{id}", s.allocGet, read...)
	s.handle(mux, "/v1/allocation/{id}/stop", s.allocStop, write...)
}

func (s *httpAPI) allocsList(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.AllocListRequest
	return serveList(s, w, r, &args.QueryOptions,
		func() ([]*structs.AllocListStub, structs.QueryMeta, error) { return s.allAllocs(r, &args) },
		func(a *structs.AllocListStub) string { return a.ID })
}

// resolveAllocID turns an allocation ID prefix into the one ID it names.
func (s *httpAPI) resolveAllocID(r *http.Request, id string) (string, error) {
	if len(id) >= fullIDLen {
		return id, nil
	}
	var args structs.AllocListRequest
	if err := s.parseQuery(r, &args.QueryOptions); err != nil {
		return "", err
	}
	args.MinQueryIndex, args.MaxQueryTime = 0, 0
	args.Prefix = id
	var out structs.AllocListResponse
	if err := s.call(r, "Alloc.List", &args, &out); err != nil {
		return "", err
	}
	return uniqueMatch("allocation", id, len(out.Allocations), func(i int) string { return out.Allocations[i].ID })
}

// getAlloc reads one allocation by ID or prefix; nil with a 404 error when
// there is none.
func (s *httpAPI) getAlloc(w http.ResponseWriter, r *http.Request, id string) (*structs.Allocation, error) {
	id, err := s.resolveAllocID(r, id)
	if err != nil {
		return nil, err
	}
	args := structs.AllocSpecificRequest{AllocID: id}
	if err := s.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SingleAllocResponse
	if err := s.call(r, "Alloc.GetAlloc", &args, &out); err != nil {
		return nil, err
	}
	if w != nil {
		setMeta(w, &out.QueryMeta)
	}
	if out.Alloc == nil {
		return nil, notFound("allocation %q not found", id)
	}
	return out.Alloc, nil
}

func (s *httpAPI) allocGet(w http.ResponseWriter, r *http.Request) (any, error) {
	alloc, err := s.getAlloc(w, r, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return alloc, nil
}

// allocStop answers {"EvalID", "Index"}, Nomad's AllocStopResponse.
func (s *httpAPI) allocStop(w http.ResponseWriter, r *http.Request) (any, error) {
	id, err := s.resolveAllocID(r, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	args := structs.AllocStopRequest{AllocID: id}
	if args.NoShutdownDelay, err = boolParam(r, "no_shutdown_delay"); err != nil {
		return nil, err
	}
	s.parseWrite(r, &args.WriteRequest)
	var out structs.AllocStopResponse
	if err := s.call(r, "Alloc.Stop", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return &out, nil
}
