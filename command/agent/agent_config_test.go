package agent

import (
	"net/netip"
	"slices"
	"testing"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/command/agent/config"
)

// The agent applies what its configuration says; the config package's
// tests check the parsing, these that a started agent acts on it.

// An agent started with default_scheduler_config stores it in a new
// cluster (the server tests check that the leader honours it).
func TestAgentStoresItsDefaultSchedulerConfig(t *testing.T) {
	cfg, _, err := config.Parse("agent.hcl", []byte("server {\n  default_scheduler_config {\n    scheduler_algorithm = \"spread\"\n    pause_eval_broker = true\n  }\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	a := NewTestAgent(t, func(c *config.Config) {
		c.Client.Enabled = false
		c.Server.DefaultSchedulerConfig = cfg.Server.DefaultSchedulerConfig
	})
	got := mustNomadSchedulerConfig(t, nomadClient(t, a))
	if got.SchedulerAlgorithm != nomadapi.SchedulerAlgorithmSpread || !got.PauseEvalBroker || !got.PreemptionConfig.SystemSchedulerEnabled || got.ModifyIndex == 0 {
		t.Fatalf("a new cluster must store the agent's default: %+v", got)
	}
}

func TestTheAgentsListenersAreOffLimitsToArtifacts(t *testing.T) {
	a := NewTestAgent(t, nil)
	own := a.ownAddrs()
	want := netip.MustParseAddrPort(a.Addr)
	if !slices.Contains(own, want) || !slices.Contains(own, netip.MustParseAddrPort(a.RPCAddr())) {
		t.Fatalf("own addresses %v, want the HTTP %s and RPC %s listeners", own, a.Addr, a.RPCAddr())
	}
}
