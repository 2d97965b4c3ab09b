package httpapi

import (
	"net/http"

	"github.com/drover-sched/drover/structs"
)

// Cluster metadata: the raft leader and peers, and the regions and
// namespaces Drover has (one region per cluster, one namespace).

func (s *httpAPI) routeStatus(mux *http.ServeMux) {
	s.handle(mux, "/v1/status/leader", s.statusLeader, read...)
	s.handle(mux, "/v1/status/peers", s.statusPeers, read...)
	s.handle(mux, "/v1/regions", s.regions, read...)
	s.handle(mux, "/v1/namespaces", s.namespaces, read...)
	s.handle(mux, "/v1/namespace/{name}", s.namespaceGet, read...)
}

// statusLeader answers the leader's RPC address as a JSON string, "" when
// there is none.
func (s *httpAPI) statusLeader(w http.ResponseWriter, r *http.Request) (any, error) {
	leader, err := s.leader(r)
	if err != nil {
		return nil, err
	}
	return leader, nil
}

func (s *httpAPI) leader(r *http.Request) (string, error) {
	var args structs.GenericRequest
	if err := s.parseQuery(r, &args.QueryOptions); err != nil {
		return "", err
	}
	var leader string
	err := s.call(r, "Status.Leader", &args, &leader)
	return leader, err
}

func (s *httpAPI) statusPeers(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.GenericRequest
	if err := s.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var peers []string
	if err := s.call(r, "Status.Peers", &args, &peers); err != nil {
		return nil, err
	}
	return nonNil(peers), nil
}

func (s *httpAPI) regions(w http.ResponseWriter, r *http.Request) (any, error) {
	return []string{s.config().Region}, nil
}

// namespace is the shape of Nomad's namespace objects.
type namespace struct {
	Name        string
	Description string
	Quota       string
	Meta        map[string]string
	CreateIndex uint64
	ModifyIndex uint64
}

var defaultNamespace = namespace{
	Name:        structs.DefaultNamespace,
	Description: "Default shared namespace",
	Meta:        map[string]string{},
	CreateIndex: 1,
	ModifyIndex: 1,
}

// namespaces lists the namespaces the token may use at all (any
// capability), as Nomad filters its list.
func (s *httpAPI) namespaces(w http.ResponseWriter, r *http.Request) (any, error) {
	a, err := s.aclFor(r)
	if err != nil {
		return nil, err
	}
	setMeta(w, &structs.QueryMeta{Index: 1, KnownLeader: true})
	out := []namespace{}
	if a.AllowNamespace(structs.DefaultNamespace) {
		out = append(out, defaultNamespace)
	}
	return out, nil
}

// namespaceGet reads a namespace the token may use at all.
func (s *httpAPI) namespaceGet(w http.ResponseWriter, r *http.Request) (any, error) {
	a, err := s.aclFor(r)
	if err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	if !a.AllowNamespace(name) {
		return nil, permissionDenied("the token may not use namespace %q", name)
	}
	if name != structs.DefaultNamespace {
		return nil, notFound("namespace %q not found (Drover has only %q)", name, structs.DefaultNamespace)
	}
	setMeta(w, &structs.QueryMeta{Index: 1, KnownLeader: true})
	ns := defaultNamespace
	return &ns, nil
}
