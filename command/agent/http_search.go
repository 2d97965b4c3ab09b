package agent

import (
	"errors"
	"net/http"
	"sort"
	"strings"

	"github.com/drover-sched/drover/structs"
)

// Prefix search (PUT /v1/search), which Nomad's CLI uses to resolve a
// short ID typed by a person (`nomad status <prefix>`). It answers
// {"Matches": {context: [ids]}, "Truncations": {context: bool}} from the
// list endpoints' prefix filters, at most searchLimit IDs per context,
// as Nomad does.
//
// Each context is read with the request's token, through the list
// endpoints that check it: a context the token may not read answers no
// matches, and a search in which it may read none is refused, as Nomad's
// is.

func (s *httpAPI) routeSearch(mux *http.ServeMux) {
	s.handle(mux, "/v1/search", s.search, write...)
}

// searchLimit is how many matches Nomad returns per context.
const searchLimit = 20

// Search contexts Drover has objects for; "all" searches each. Nomad's
// other contexts (volumes, plugins, quotas, variables, ...) name objects
// Drover does not have and always match nothing.
const (
	searchAll         = "all"
	searchJobs        = "jobs"
	searchEvals       = "evals"
	searchAllocs      = "allocs"
	searchNodes       = "nodes"
	searchDeployments = "deployment"
	searchNamespaces  = "namespaces"
)

var searchContexts = []string{searchJobs, searchEvals, searchAllocs, searchNodes, searchDeployments, searchNamespaces}

type searchRequest struct {
	Prefix  string
	Context string
}

type searchResponse struct {
	Matches     map[string][]string
	Truncations map[string]bool
}

func (s *httpAPI) search(w http.ResponseWriter, r *http.Request) (any, error) {
	var body searchRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	var q structs.QueryOptions
	if err := s.parseQuery(r, &q); err != nil {
		return nil, err
	}
	q.Prefix = body.Prefix
	q.MinQueryIndex, q.MaxQueryTime = 0, 0

	contexts := []string{body.Context}
	switch body.Context {
	case searchAll:
		contexts = searchContexts
	case "":
		return nil, badRequest("search Context is missing (one of %s or %s)", strings.Join(searchContexts, ", "), searchAll)
	}
	out := &searchResponse{Matches: map[string][]string{}, Truncations: map[string]bool{}}
	meta := structs.QueryMeta{KnownLeader: true}
	var denied error
	readable := 0
	for _, ctx := range contexts {
		ids, m, err := s.searchContext(r, ctx, q)
		if errors.Is(err, structs.ErrPermissionDenied) {
			denied, ids, m, err = err, nil, nil, nil
		} else if err == nil {
			readable++
		}
		if err != nil {
			return nil, err
		}
		if m != nil {
			meta.Index = max(meta.Index, m.Index)
			meta.KnownLeader = meta.KnownLeader && m.KnownLeader
		}
		sort.Strings(ids)
		if len(ids) > searchLimit {
			ids = ids[:searchLimit]
			out.Truncations[ctx] = true
		} else {
			out.Truncations[ctx] = false
		}
		out.Matches[ctx] = nonNil(ids)
	}
	if readable == 0 && denied != nil {
		return nil, denied
	}
	setMeta(w, &meta)
	return out, nil
}

// searchContext lists the IDs of one context that start with q.Prefix,
// following the server's pages to the end (the IDs are then sorted and
// cut to searchLimit).
func (s *httpAPI) searchContext(r *http.Request, ctx string, q structs.QueryOptions) ([]string, *structs.QueryMeta, error) {
	switch ctx {
	case searchJobs:
		args := structs.JobListRequest{QueryOptions: q}
		return searchIDs(&args.QueryOptions, func(j *structs.JobListStub) string { return j.ID }, func() ([]*structs.JobListStub, *structs.QueryMeta, error) {
			var out structs.JobListResponse
			err := s.call(r, "Job.List", &args, &out)
			return out.Jobs, &out.QueryMeta, err
		})
	case searchEvals:
		args := structs.EvalListRequest{QueryOptions: q}
		return searchIDs(&args.QueryOptions, func(e *structs.Evaluation) string { return e.ID }, func() ([]*structs.Evaluation, *structs.QueryMeta, error) {
			var out structs.EvalListResponse
			err := s.call(r, "Eval.List", &args, &out)
			return out.Evaluations, &out.QueryMeta, err
		})
	case searchAllocs:
		args := structs.AllocListRequest{QueryOptions: q}
		return searchIDs(&args.QueryOptions, func(a *structs.AllocListStub) string { return a.ID }, func() ([]*structs.AllocListStub, *structs.QueryMeta, error) {
			var out structs.AllocListResponse
			err := s.call(r, "Alloc.List", &args, &out)
			return out.Allocations, &out.QueryMeta, err
		})
	case searchNodes:
		args := structs.NodeListRequest{QueryOptions: q}
		return searchIDs(&args.QueryOptions, func(n *structs.NodeListStub) string { return n.ID }, func() ([]*structs.NodeListStub, *structs.QueryMeta, error) {
			var out structs.NodeListResponse
			err := s.call(r, "Node.List", &args, &out)
			return out.Nodes, &out.QueryMeta, err
		})
	case searchDeployments:
		args := structs.GenericRequest{QueryOptions: q}
		return searchIDs(&args.QueryOptions, func(d *structs.Deployment) string { return d.ID }, func() ([]*structs.Deployment, *structs.QueryMeta, error) {
			var out structs.DeploymentListResponse
			err := s.call(r, "Deployment.List", &args, &out)
			return out.Deployments, &out.QueryMeta, err
		})
	case searchNamespaces:
		a, err := s.aclFor(r)
		if err != nil {
			return nil, nil, err
		}
		if !a.AllowNamespace(structs.DefaultNamespace) {
			return nil, nil, permissionDenied("the token may use no namespace")
		}
		var ids []string
		if strings.HasPrefix(structs.DefaultNamespace, q.Prefix) {
			ids = append(ids, structs.DefaultNamespace)
		}
		return ids, nil, nil
	}
	return nil, nil, nil
}

// searchIDs reads a whole list with followPages and returns its IDs.
func searchIDs[T any](q *structs.QueryOptions, id func(T) string, call func() ([]T, *structs.QueryMeta, error)) ([]string, *structs.QueryMeta, error) {
	list, meta, err := followPages(q, call)
	if err != nil {
		return nil, nil, err
	}
	ids := make([]string, 0, len(list))
	for _, v := range list {
		ids = append(ids, id(v))
	}
	return ids, &meta, nil
}
