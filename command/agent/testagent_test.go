package agent

import (
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/command/agent/internal/testagent"
	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/nomad/nomadtest"
)

// TestAgent is a real in-process agent for this package's tests (other
// packages' tests use command/agent/agenttest, which starts agents the
// same way: both take the node name, logger and waits from
// command/agent/internal/testagent): by default a dev agent (server and
// client, raw_exec and mock drivers) on 127.0.0.1 with free ports and
// short raft timings.
type TestAgent struct {
	*Agent
	// Addr is the HTTP API address, "127.0.0.1:port".
	Addr string
	// URL is the HTTP API base URL, "http://127.0.0.1:port" (https with
	// tls.http).
	URL string
}

// NewTestAgent starts an agent and shuts it down when the test ends. cb
// may change the configuration first (disable the client, add meta, set
// ServerHook or ClientHook). It returns once the agent is ready for work
// (testagent.Start). Logs are discarded unless DROVER_TEST_LOG is set (to
// a level).
func NewTestAgent(t testing.TB, cb func(*config.Config)) *TestAgent {
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
	a := testagent.Start(t, cfg.Name, roles, func(logger hclog.Logger) (*Agent, error) { return NewAgent(cfg, logger) })
	return &TestAgent{Agent: a, Addr: a.HTTPAddr(), URL: a.HTTPURL()}
}

// waitFor polls cond until it holds, failing the test at the deadline.
func (ta *TestAgent) waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testagent.WaitFor(t, what, cond)
}
