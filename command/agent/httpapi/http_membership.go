package httpapi

import (
	"net/http"
	"strings"

	"github.com/drover-sched/drover/structs"
)

// Cluster membership changes an operator makes by hand: `server join`
// brings servers together at once, `operator raft remove-peer` takes a
// dead server out of the raft configuration so the quorum no longer
// counts it.

func (s *httpAPI) routeMembership(mux *http.ServeMux) {
	s.handle(mux, "/v1/agent/join", s.agentJoin, write...)
	s.handle(mux, "/v1/operator/raft/peer", s.raftRemovePeer, http.MethodDelete)
}

// joinResponse is Nomad's answer to /v1/agent/join: how many addresses
// joined, and what went wrong with the others (an error here is not an
// HTTP error, so a partial join still reports its count).
type joinResponse struct {
	NumJoined int    `json:"num_joined"`
	Error     string `json:"error"`
}

// agentJoin joins this agent's server to the servers at ?address= (one
// or more RPC addresses, host:port). It needs agent write.
func (s *httpAPI) agentJoin(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.allowAgent(r, true); err != nil {
		return nil, err
	}
	if s.server == nil {
		return nil, badRequest("this agent runs no server: join is for servers (a client finds servers through client.servers or server_join)")
	}
	addrs := r.URL.Query()["address"]
	if len(addrs) == 0 {
		return nil, badRequest("missing address: give one or more ?address=host:port of other servers' RPC ports")
	}
	for _, a := range addrs {
		if strings.TrimSpace(a) == "" {
			return nil, badRequest("empty address: each ?address= must be a server's RPC address, host:port")
		}
	}
	n, err := s.server.JoinNow(addrs)
	out := joinResponse{NumJoined: n}
	if err != nil {
		out.Error = err.Error()
	}
	return out, nil
}

// raftRemovePeer removes the server named by ?address= or ?id= from the
// raft configuration.
func (s *httpAPI) raftRemovePeer(w http.ResponseWriter, r *http.Request) (any, error) {
	q := r.URL.Query()
	addr, id := q.Get("address"), q.Get("id")
	if (addr == "") == (id == "") {
		return nil, badRequest("name the peer to remove by exactly one of ?address=host:port or ?id=<raft id>")
	}
	cfg, err := s.raftServers(r)
	if err != nil {
		return nil, err
	}
	var target *structs.RaftServer
	var known []string
	for _, srv := range cfg.Servers {
		known = append(known, srv.ID+" at "+srv.Address)
		if (id != "" && srv.ID == id) || (addr != "" && srv.Address == addr) {
			target = srv
		}
	}
	if target == nil {
		what := "address " + addr
		if id != "" {
			what = "id " + id
		}
		return nil, notFound("no raft peer with %s; the peers are: %s", what, strings.Join(known, ", "))
	}
	if len(cfg.Servers) == 1 {
		return nil, badRequest("refusing to remove %s: it is the only raft peer, and the cluster would have no servers left", target.ID)
	}
	var args structs.RaftPeerAddRequest
	args.ID, args.Address = target.ID, target.Address
	s.parseWrite(r, &args.WriteRequest)
	var out structs.GenericResponse
	if err := s.call(r, "Operator.RaftRemovePeer", &args, &out); err != nil {
		return nil, err
	}
	s.logger.Info("removed raft peer", "id", target.ID, "address", target.Address)
	return nil, nil
}
