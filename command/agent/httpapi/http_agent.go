package httpapi

import (
	"cmp"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"

	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/structs"
)

func (s *httpAPI) routeAgent(mux *http.ServeMux) {
	s.handle(mux, "/v1/agent/self", s.agentSelf, read...)
	s.handle(mux, "/v1/agent/members", s.agentMembers, read...)
	s.handle(mux, "/v1/agent/servers", s.agentServers, read...)
	s.handleFunc(mux, "GET /v1/agent/health", s.agentHealth)
}

// agentSelf answers Nomad's {"config", "member", "stats"}. Nomad's CLI and
// client read config.Region, config.Datacenter, config.NodeName and
// stats.client.node_id from it; the rest is for people. It needs agent
// read.
func (s *httpAPI) agentSelf(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.allowAgent(r, false); err != nil {
		return nil, err
	}
	info := s.info()
	c := info.Config
	self := map[string]any{
		"config": s.selfConfig(info),
		"member": agentMember{Tags: map[string]string{}},
		"stats":  s.selfStats(info),
	}
	if s.server != nil {
		self["member"] = s.memberFor(c, c.Name, info.RPCAddr, s.server.IsLeader())
	}
	return self, nil
}

func (s *httpAPI) selfConfig(info AgentInfo) map[string]any {
	c := info.Config
	return map[string]any{
		"Region":     c.Region,
		"Datacenter": c.Datacenter,
		"NodeName":   c.Name,
		"DataDir":    c.DataDir,
		"LogLevel":   c.LogLevel,
		"LogJson":    c.LogJSON,
		"BindAddr":   c.BindAddr,
		"DevMode":    c.DevMode,
		"Files":      nonNil(c.Files),
		"Ports":      map[string]int{"HTTP": c.Ports.HTTP, "RPC": c.Ports.RPC, "Serf": c.Ports.Serf},
		"Addresses":  map[string]string{"HTTP": cmp.Or(c.Addresses.HTTP, c.BindAddr), "RPC": cmp.Or(c.Addresses.RPC, c.BindAddr)},
		"AdvertiseAddrs": map[string]string{
			"HTTP": info.HTTPAddr,
			"RPC":  info.RPCAddr,
		},
		"Server": map[string]any{
			"Enabled":           c.Server.Enabled,
			"BootstrapExpect":   c.Server.BootstrapExpect,
			"ServerJoin":        map[string]any{"RetryJoin": nonNil(c.Server.ServerJoin.RetryJoin), "RetryInterval": c.Server.ServerJoin.RetryInterval},
			"NumSchedulers":     c.Server.NumSchedulers,
			"EnabledSchedulers": nonNil(c.Server.EnabledSchedulers),
		},
		"Client": map[string]any{
			"Enabled":   c.Client.Enabled,
			"Servers":   nonNil(info.Servers),
			"NodeClass": c.Client.NodeClass,
			"NodePool":  c.Client.NodePool,
			"Meta":      c.Client.Meta,
			"Options":   c.Client.Options,
		},
		"Version": map[string]string{"Version": c.Version, "VersionPrerelease": "", "VersionMetadata": "", "Revision": ""},
	}
}

// selfStats are Nomad's string-valued stats groups.
func (s *httpAPI) selfStats(info AgentInfo) map[string]map[string]string {
	stats := map[string]map[string]string{
		"runtime": {
			"arch":       runtime.GOARCH,
			"os":         runtime.GOOS,
			"version":    runtime.Version(),
			"max_procs":  strconv.Itoa(runtime.GOMAXPROCS(0)),
			"goroutines": strconv.Itoa(runtime.NumGoroutine()),
			"cpu_count":  strconv.Itoa(runtime.NumCPU()),
		},
	}
	if s.server != nil {
		stats["nomad"] = map[string]string{
			"server":        "true",
			"leader":        strconv.FormatBool(s.server.IsLeader()),
			"leader_addr":   s.server.Leader(),
			"bootstrap":     strconv.FormatBool(info.Config.Server.BootstrapExpect == 1),
			"known_regions": "1",
		}
	}
	if s.client != nil {
		stats["client"] = map[string]string{
			"node_id":       s.client.NodeID(),
			"known_servers": strings.Join(info.Servers, ","),
		}
	}
	return stats
}

// agentMember is the shape of a Nomad (serf) member. Drover has no serf:
// the members are the raft servers, always "alive" while in the
// configuration.
type agentMember struct {
	Name        string
	Addr        string
	Port        uint16
	Tags        map[string]string
	Status      string
	ProtocolMin uint8
	ProtocolMax uint8
	ProtocolCur uint8
	DelegateMin uint8
	DelegateMax uint8
	DelegateCur uint8
}

// memberFor describes the server named name at RPC address addr. The
// tags are the ones Nomad's `server members` reads: rpc_addr and port
// identify the leader, raft_vsn, build, dc and region are printed.
func (s *httpAPI) memberFor(c *config.Config, name, addr string, leader bool) agentMember {
	host, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.ParseUint(portStr, 10, 16)
	if !strings.HasSuffix(name, "."+c.Region) {
		name += "." + c.Region
	}
	return agentMember{
		Name: name, Addr: host, Port: uint16(port), Status: "alive",
		Tags: map[string]string{
			"role":     "nomad",
			"region":   c.Region,
			"dc":       c.Datacenter,
			"build":    c.Version,
			"port":     portStr,
			"rpc_addr": host,
			"raft_vsn": "3",
			"expect":   strconv.Itoa(c.Server.BootstrapExpect),
			"leader":   strconv.FormatBool(leader),
		},
		ProtocolMin: 1, ProtocolMax: 5, ProtocolCur: 2,
		DelegateMin: 2, DelegateMax: 5, DelegateCur: 4,
	}
}

// agentMembers lists the servers of the region from the raft
// configuration. Datacenters of other servers are not known without serf;
// they are reported as this agent's. It needs node read, as in Nomad: a
// server agent reads the raft configuration on its own behalf once the
// token passed (a client-only agent has no authority of its own, so its
// members need the token's operator read too).
func (s *httpAPI) agentMembers(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.allowNodeRead(r); err != nil {
		return nil, err
	}
	var raft *structs.RaftConfigurationResponse
	var err error
	if s.server != nil {
		raft, err = s.ownRaftServers(r)
	} else {
		raft, err = s.raftServers(r)
	}
	if err != nil {
		return nil, err
	}
	c := s.config()
	members := make([]agentMember, 0, len(raft.Servers))
	for _, srv := range raft.Servers {
		members = append(members, s.memberFor(c, cmp.Or(srv.Node, srv.ID), srv.Address, srv.Leader))
	}
	return map[string]any{
		"ServerName":   c.Name,
		"ServerRegion": c.Region,
		"ServerDC":     c.Datacenter,
		"Members":      members,
	}, nil
}

// agentServers lists the servers the agent's client talks to (agent
// read).
func (s *httpAPI) agentServers(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.allowAgent(r, false); err != nil {
		return nil, err
	}
	return nonNil(s.info().Servers), nil
}

type healthCheck struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// agentHealth answers 200 when the server knows a leader and the client
// has registered, 500 otherwise, with Nomad's body either way.
func (s *httpAPI) agentHealth(w http.ResponseWriter, r *http.Request) {
	out := map[string]healthCheck{}
	healthy := true
	if s.server != nil {
		var args structs.GenericRequest
		args.Region = s.config().Region
		var leader string
		err := s.call(r, "Status.Leader", &args, &leader)
		switch {
		case err != nil:
			out["server"] = healthCheck{Message: err.Error()}
		case leader == "":
			out["server"] = healthCheck{Message: "no cluster leader"}
		default:
			out["server"] = healthCheck{OK: true, Message: "ok"}
		}
		healthy = healthy && out["server"].OK
	}
	if s.client != nil {
		if s.client.NodeID() == "" {
			out["client"] = healthCheck{Message: "client has not registered"}
			healthy = false
		} else {
			out["client"] = healthCheck{OK: true, Message: "ok"}
		}
	}
	if !healthy {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
	}
	s.writeJSON(w, r, out)
}
