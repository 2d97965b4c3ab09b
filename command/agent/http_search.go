package agent

import (
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
	for _, ctx := range contexts {
		ids, m, err := s.searchContext(r, ctx, q)
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
	setMeta(w, &meta)
	return out, nil
}

// searchContext lists the IDs of one context that start with q.Prefix.
func (s *httpAPI) searchContext(r *http.Request, ctx string, q structs.QueryOptions) ([]string, *structs.QueryMeta, error) {
	var ids []string
	switch ctx {
	case searchJobs:
		var out structs.JobListResponse
		if err := s.call(r, "Job.List", &structs.JobListRequest{QueryOptions: q}, &out); err != nil {
			return nil, nil, err
		}
		for _, j := range out.Jobs {
			ids = append(ids, j.ID)
		}
		return ids, &out.QueryMeta, nil
	case searchEvals:
		var out structs.EvalListResponse
		if err := s.call(r, "Eval.List", &structs.EvalListRequest{QueryOptions: q}, &out); err != nil {
			return nil, nil, err
		}
		for _, e := range out.Evaluations {
			ids = append(ids, e.ID)
		}
		return ids, &out.QueryMeta, nil
	case searchAllocs:
		var out structs.AllocListResponse
		if err := s.call(r, "Alloc.List", &structs.AllocListRequest{QueryOptions: q}, &out); err != nil {
			return nil, nil, err
		}
		for _, a := range out.Allocations {
			ids = append(ids, a.ID)
		}
		return ids, &out.QueryMeta, nil
	case searchNodes:
		var out structs.NodeListResponse
		if err := s.call(r, "Node.List", &structs.NodeListRequest{QueryOptions: q}, &out); err != nil {
			return nil, nil, err
		}
		for _, n := range out.Nodes {
			ids = append(ids, n.ID)
		}
		return ids, &out.QueryMeta, nil
	case searchDeployments:
		var out structs.DeploymentListResponse
		if err := s.call(r, "Deployment.List", &structs.GenericRequest{QueryOptions: q}, &out); err != nil {
			return nil, nil, err
		}
		for _, d := range out.Deployments {
			ids = append(ids, d.ID)
		}
		return ids, &out.QueryMeta, nil
	case searchNamespaces:
		if strings.HasPrefix(structs.DefaultNamespace, q.Prefix) {
			ids = append(ids, structs.DefaultNamespace)
		}
		return ids, nil, nil
	}
	return nil, nil, nil
}
