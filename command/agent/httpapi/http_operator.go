package httpapi

import (
	"net/http"

	"github.com/drover-sched/drover/structs"
)

func (s *httpAPI) routeOperator(mux *http.ServeMux) {
	s.handle(mux, "/v1/operator/raft/configuration", s.raftConfiguration, read...)
	s.handle(mux, "/v1/operator/scheduler/configuration", s.schedulerGetConfig, read...)
	s.handle(mux, "/v1/operator/scheduler/configuration", s.schedulerSetConfig, write...)
	s.handle(mux, "/v1/system/gc", s.systemGC, write...)
}

// raftConfiguration answers {"Servers": [...], "Index": n}.
func (s *httpAPI) raftConfiguration(w http.ResponseWriter, r *http.Request) (any, error) {
	out, err := s.raftServers(r)
	if err != nil {
		return nil, err
	}
	setMeta(w, &structs.QueryMeta{Index: out.Index, KnownLeader: true})
	return out, nil
}

func (s *httpAPI) raftServers(r *http.Request) (*structs.RaftConfigurationResponse, error) {
	var args structs.GenericRequest
	if err := s.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.RaftConfigurationResponse
	if err := s.call(r, "Operator.RaftGetConfiguration", &args, &out); err != nil {
		return nil, err
	}
	out.Servers = nonNil(out.Servers)
	return &out, nil
}

// ownRaftServers reads the raft configuration as the agent's own server,
// not as the HTTP client: the call carries no token and names no remote
// caller, so the server treats it as its own work. Only a handler that
// already checked the request's token for what it answers may use it.
func (s *httpAPI) ownRaftServers(r *http.Request) (*structs.RaftConfigurationResponse, error) {
	args := structs.GenericRequest{QueryOptions: structs.QueryOptions{Region: s.region(r), AllowStale: true}}
	var out structs.RaftConfigurationResponse
	if err := s.server.RPC(r.Context(), "Operator.RaftGetConfiguration", &args, &out); err != nil {
		return nil, err
	}
	out.Servers = nonNil(out.Servers)
	return &out, nil
}

// systemGC forces a garbage collection. A server without the endpoint
// treats it as a no-op, since GC also runs on its own timer.
func (s *httpAPI) systemGC(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.GenericRequest
	if err := s.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.GenericResponse
	err := s.call(r, "System.GarbageCollect", &args, &out)
	if err != nil && isMissingMethod(err) {
		s.logger.Info("forced garbage collection requested, but the server has no System.GarbageCollect; the leader's periodic GC still collects on its intervals")
		return nil, nil
	}
	return nil, err
}
