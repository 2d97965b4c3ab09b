package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/nomad/nomadtest"
)

// TestNomadClientJoinAndRemovePeer forms a two-server cluster with
// Nomad's Agent().Join and takes the second server out again with
// Operator().RaftRemovePeerByAddress, checking the refusals on the way.
func TestNomadClientJoinAndRemovePeer(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := nomadClient(t, a)
	// A server that neither bootstraps nor knows anyone waits to be joined.
	waiting := nomadtest.Server(t, func(sc *nomad.Config) {
		sc.BootstrapExpect = 0
		sc.NodeName = "waiting"
	})
	peers := func() []*nomadapi.RaftServer {
		cfg, err := c.Operator().RaftGetConfiguration(nil)
		if err != nil {
			t.Fatalf("raft configuration: %v", err)
		}
		return cfg.Servers
	}
	waitPeers := func(n int) {
		t.Helper()
		wait.For(t, 10*time.Second, func() (bool, string) {
			cfg, err := c.Operator().RaftGetConfiguration(nil)
			if err != nil {
				return false, err.Error()
			}
			return len(cfg.Servers) == n, fmt.Sprintf("%d raft peers, want %d", len(cfg.Servers), n)
		})
	}

	if _, err := c.Agent().Join(); err == nil || !strings.Contains(err.Error(), "missing address") {
		t.Fatalf("join without addresses: %v", err)
	}
	if n, err := c.Agent().Join("127.0.0.1:1"); n != 0 || err == nil || !strings.Contains(err.Error(), "contacting 127.0.0.1:1") {
		t.Fatalf("join of nobody: %d %v", n, err)
	}
	if n, err := c.Agent().Join(waiting.RPCAddr()); n != 1 || err != nil {
		t.Fatalf("join: %d %v", n, err)
	}
	waitPeers(2)
	wait.For(t, 10*time.Second, func() (bool, string) {
		addr, _ := waiting.Leader()
		return addr == a.server.RPCAddr(), "the joined server has not learnt the leader"
	})

	op := c.Operator()
	if err := op.RaftRemovePeerByAddress("127.0.0.1:9", nil); err == nil || !strings.Contains(err.Error(), "no raft peer with address 127.0.0.1:9") {
		t.Fatalf("remove unknown address: %v", err)
	}
	if err := op.RaftRemovePeerByID("nope", nil); err == nil || !strings.Contains(err.Error(), "no raft peer with id nope") {
		t.Fatalf("remove unknown id: %v", err)
	}
	if len(peers()) != 2 {
		t.Fatal("a refused removal changed the configuration")
	}
	if err := op.RaftRemovePeerByAddress(waiting.RPCAddr(), nil); err != nil {
		t.Fatalf("remove by address: %v", err)
	}
	waitPeers(1)
	only := peers()[0]
	if err := op.RaftRemovePeerByID(only.ID, nil); err == nil || !strings.Contains(err.Error(), "only raft peer") {
		t.Fatalf("removing the last peer: %v", err)
	}
	if len(peers()) != 1 {
		t.Fatal("the last peer was removed")
	}
}
