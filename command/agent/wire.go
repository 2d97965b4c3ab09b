package agent

import (
	"fmt"

	clientconfig "github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/nomad"
)

// newServer creates the server.
func newServer(cfg *nomad.Config) (serverHandle, error) {
	s, err := nomad.NewServer(cfg)
	if err != nil {
		return nil, err
	}
	return nomadServer{s}, nil
}

// nomadServer adapts *nomad.Server to serverHandle.
type nomadServer struct{ *nomad.Server }

// Leader returns the leader's RPC address.
func (s nomadServer) Leader() string {
	addr, _ := s.Server.Leader()
	return addr
}

// newClient creates the client. TODO(agent): call client.NewClient once
// the client lands.
func newClient(cfg *clientconfig.Config) (clientHandle, error) {
	return nil, fmt.Errorf("client: %w (client.NewClient is not committed yet)", errNotBuilt)
}
