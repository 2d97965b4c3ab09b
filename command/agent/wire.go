package agent

import (
	"fmt"

	clientconfig "github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/nomad"
)

// newServer creates the server. TODO(agent): call nomad.NewServer once the
// server lands; until then an agent can only run against a fake.
func newServer(cfg *nomad.Config) (serverHandle, error) {
	return nil, fmt.Errorf("server: %w (nomad.NewServer is not committed yet)", errNotBuilt)
}

// newClient creates the client. TODO(agent): call client.NewClient once
// the client lands.
func newClient(cfg *clientconfig.Config) (clientHandle, error) {
	return nil, fmt.Errorf("client: %w (client.NewClient is not committed yet)", errNotBuilt)
}
