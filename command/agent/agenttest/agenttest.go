// Package agenttest starts real in-process agents for the tests of other
// packages (the CLI's): the same agents the agent package's own tests start
// (command/agent's testagent_test.go), sharing their node names, logger
// and waits through command/agent/internal/testagent. Only tests import
// it: the drover binary carries no test code (binary_deps_test.go at the
// module root).
package agenttest

import (
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/command/agent"
	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/command/agent/internal/testagent"
	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/nomad/nomadtest"
)

// Agent is a real in-process agent for tests: by default a dev agent
// (server and client, raw_exec and mock drivers) on 127.0.0.1 with free
// ports and short raft timings.
type Agent struct {
	*agent.Agent
	// Addr is the HTTP API address, "127.0.0.1:port".
	Addr string
	// URL is the HTTP API base URL, "http://127.0.0.1:port" (https with
	// tls.http).
	URL string
}

// New starts an agent and shuts it down when the test ends. cb may change
// the configuration first (disable the client, add meta, set ServerHook or
// ClientHook). It returns once the server has a leader and the client's
// node is registered and ready, so a test can submit work at once (a
// client-only agent with ACLs on returns once its client has registered:
// reading the node needs a token). Logs are discarded unless
// DROVER_TEST_LOG is set (to a level).
func New(t testing.TB, cb func(*config.Config)) *Agent {
	t.Helper()
	cfg := config.Dev()
	cfg.Name = testagent.NodeName(t)
	cfg.BindAddr = "127.0.0.1"
	cfg.Ports = config.Ports{}
	cfg.DataDir = t.TempDir()
	cfg.Version = testagent.Version
	// Test agents do not depend on the machine's Docker Engine: their
	// docker driver is loaded but unhealthy, unless cb configures one.
	cfg.Plugins["docker"] = &config.PluginConfig{Name: "docker", Config: map[string]any{"endpoint": testagent.NoDockerEndpoint}}
	if cb != nil {
		cb(cfg)
	}
	userHook := cfg.ServerHook
	cfg.ServerHook = func(sc *nomad.Config) {
		nomadtest.Fast(sc)
		if userHook != nil {
			userHook(sc)
		}
	}
	roles := testagent.Roles{Region: cfg.Region, Server: cfg.Server.Enabled, Client: cfg.Client.Enabled, ACL: cfg.ACL.Enabled}
	a := testagent.Start(t, cfg.Name, roles, func(logger hclog.Logger) (*agent.Agent, error) { return agent.NewAgent(cfg, logger) })
	return &Agent{Agent: a, Addr: a.HTTPAddr(), URL: a.HTTPURL()}
}
