package httpapi

import (
	"net/http"
	"sort"
	"strings"

	"github.com/drover-sched/drover/structs"
)

// Node pools are not objects of their own in Drover: a node names its
// pool and a job the pool it runs in. GET /v1/node/pools lists, in
// Nomad's NodePool shape, the built-in pools ("all" and "default") and
// every pool a node names, so Nomad's client and `node pool list` work.
// The per-pool endpoints (/v1/node/pool/:name...) are not served: their
// paths overlap /v1/node/:id/... in the router, and pools cannot be
// created or configured.

const nodePoolAll = "all"

type nodePool struct {
	Name        string
	Description string
	Meta        map[string]string
	CreateIndex uint64
	ModifyIndex uint64
}

func (s *httpAPI) routeNodePools(mux *http.ServeMux) {
	s.handle(mux, "/v1/node/pools", s.nodePoolsList, read...)
}

func (s *httpAPI) nodePoolsList(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.NodeListRequest
	if err := s.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	prefix := args.Prefix
	args.Prefix = ""
	nodes, meta, err := s.allNodes(r, &args)
	if err != nil {
		return nil, err
	}
	setMeta(w, &meta)
	names := map[string]bool{nodePoolAll: true, structs.DefaultNodePool: true}
	for _, n := range nodes {
		if n.NodePool != "" {
			names[n.NodePool] = true
		}
	}
	pools := []*nodePool{}
	for name := range names {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		p := &nodePool{Name: name, CreateIndex: 1, ModifyIndex: 1}
		switch name {
		case nodePoolAll:
			p.Description = "Node pool with all nodes in the cluster."
		case structs.DefaultNodePool:
			p.Description = "Default node pool."
		}
		pools = append(pools, p)
	}
	sort.Slice(pools, func(i, j int) bool { return pools[i].Name < pools[j].Name })
	return pools, nil
}
