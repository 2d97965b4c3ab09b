package httpapi

import (
	"net/http"

	"github.com/drover-sched/drover/structs"
)

// The list endpoints share two answers: a top-level list (/v1/jobs,
// /v1/allocations, ...) that takes ?filter=, ?per_page= and ?next_token=,
// and a list that belongs to one object (a job's allocations, a node's),
// which is answered whole. Both answer [] rather than null.

// serveList answers a top-level list endpoint: it parses the query and
// its ?filter= into q (the request's QueryOptions, which fetch sends),
// reads the list with fetch, then filters it and cuts the caller's page
// (paginate). The caller's paging is kept aside before fetch runs, since
// followPages clears q's to read every page.
func serveList[T any](s *httpAPI, w http.ResponseWriter, r *http.Request, q *structs.QueryOptions, fetch func() ([]T, structs.QueryMeta, error), key func(T) string) (any, error) {
	filter, err := s.parseListQuery(r, q)
	if err != nil {
		return nil, err
	}
	user := *q
	list, meta, err := fetch()
	if err != nil {
		return nil, err
	}
	if list, err = paginate(&user, &meta, filter, list, key); err != nil {
		return nil, err
	}
	setMeta(w, &meta)
	return nonNil(list), nil
}

// serveAllPages answers every page of a list RPC as one list, with the
// first page's meta (followPages). q is the QueryOptions page sends,
// already parsed.
func serveAllPages[T any](w http.ResponseWriter, q *structs.QueryOptions, page func() ([]T, *structs.QueryMeta, error)) (any, error) {
	list, meta, err := followPages(q, page)
	if err != nil {
		return nil, err
	}
	setMeta(w, &meta)
	return nonNil(list), nil
}

// allJobs, allAllocs and allDeployments read every page of Job.List,
// Alloc.List and Deployment.List (allEvals and allNodes are with their
// endpoints), for the list endpoints and for search.
func (s *httpAPI) allJobs(r *http.Request, args *structs.JobListRequest) ([]*structs.JobListStub, structs.QueryMeta, error) {
	return followPages(&args.QueryOptions, func() ([]*structs.JobListStub, *structs.QueryMeta, error) {
		var out structs.JobListResponse
		err := s.call(r, "Job.List", args, &out)
		return out.Jobs, &out.QueryMeta, err
	})
}

func (s *httpAPI) allAllocs(r *http.Request, args *structs.AllocListRequest) ([]*structs.AllocListStub, structs.QueryMeta, error) {
	return followPages(&args.QueryOptions, func() ([]*structs.AllocListStub, *structs.QueryMeta, error) {
		var out structs.AllocListResponse
		err := s.call(r, "Alloc.List", args, &out)
		return out.Allocations, &out.QueryMeta, err
	})
}

func (s *httpAPI) allDeployments(r *http.Request, args *structs.GenericRequest) ([]*structs.Deployment, structs.QueryMeta, error) {
	return followPages(&args.QueryOptions, func() ([]*structs.Deployment, *structs.QueryMeta, error) {
		var out structs.DeploymentListResponse
		err := s.call(r, "Deployment.List", args, &out)
		return out.Deployments, &out.QueryMeta, err
	})
}
