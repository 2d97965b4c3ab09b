package httpapi

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
		list, meta, err := s.allJobs(r, &args)
		return searchIDs(list, meta, err, func(j *structs.JobListStub) string { return j.ID })
	case searchEvals:
		args := structs.EvalListRequest{QueryOptions: q}
		list, meta, err := s.allEvals(r, &args)
		return searchIDs(list, meta, err, func(e *structs.Evaluation) string { return e.ID })
	case searchAllocs:
		args := structs.AllocListRequest{QueryOptions: q}
		list, meta, err := s.allAllocs(r, &args)
		return searchIDs(list, meta, err, func(a *structs.AllocListStub) string { return a.ID })
	case searchNodes:
		args := structs.NodeListRequest{QueryOptions: q}
		list, meta, err := s.allNodes(r, &args)
		return searchIDs(list, meta, err, func(n *structs.NodeListStub) string { return n.ID })
	case searchDeployments:
		args := structs.GenericRequest{QueryOptions: q}
		list, meta, err := s.allDeployments(r, &args)
		return searchIDs(list, meta, err, func(d *structs.Deployment) string { return d.ID })
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

// searchIDs returns the IDs of a whole list (read with followPages), or
// its error.
func searchIDs[T any](list []T, meta structs.QueryMeta, err error, id func(T) string) ([]string, *structs.QueryMeta, error) {
	if err != nil {
		return nil, nil, err
	}
	ids := make([]string, 0, len(list))
	for _, v := range list {
		ids = append(ids, id(v))
	}
	return ids, &meta, nil
}
