package nomad

import (
	"sort"

	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/structs"
)

// Status answers questions about the cluster itself: is this server alive,
// who leads, who are the peers. Any server answers from its own view.
//
// It needs no token, as Nomad's /v1/status endpoints need none: health
// checks and joining servers (which hold no secret yet, see
// server_secret.go) ask it, and it answers nothing but addresses.
type Status struct {
	srv statusServer
}

// statusServer is what Status reads of the server: its own view of raft
// and of itself.
type statusServer interface {
	Leader() (string, string)
	raftConfiguration() (raft.Configuration, uint64, error)
	member() ServerMember
}

var _ statusServer = (*Server)(nil)

// Ping answers so a caller knows the server is up.
func (s *Status) Ping(args *structs.GenericRequest, reply *struct{}) error { return nil }

// Leader returns the leader's RPC address ("" if none is known).
func (s *Status) Leader(args *structs.GenericRequest, reply *string) error {
	*reply, _ = s.srv.Leader()
	return nil
}

// Peers returns the RPC addresses of the raft voters, sorted.
func (s *Status) Peers(args *structs.GenericRequest, reply *[]string) error {
	cfg, _, err := s.srv.raftConfiguration()
	if err != nil {
		return err
	}
	peers := make([]string, 0, len(cfg.Servers))
	for _, srv := range cfg.Servers {
		peers = append(peers, string(srv.Address))
	}
	sort.Strings(peers)
	*reply = peers
	return nil
}

// Member describes this server to a server that is joining.
func (s *Status) Member(args *structs.GenericRequest, reply *ServerMember) error {
	*reply = s.srv.member()
	return nil
}
