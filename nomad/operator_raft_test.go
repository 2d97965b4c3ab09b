package nomad

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/structs"
)

// A server whose data dir was wiped comes back at its old address with a
// new raft ID. The leader replaces the old ID with the new one instead of
// refusing the duplicate address forever.
func TestServerWithWipedDataDirRejoinsAtItsAddress(t *testing.T) {
	t.Parallel()
	servers := startCluster(t, 3)
	leader := WaitForLeader(t, 10*time.Second, servers...)
	var gone *Server
	var rest []*Server
	for _, s := range servers {
		if s != leader && gone == nil {
			gone = s
		} else {
			rest = append(rest, s)
		}
	}
	oldID, addr, name := gone.NodeID(), gone.RPCAddr(), gone.config.NodeName
	gone.Shutdown()

	back := testServer(t, func(c *Config) {
		c.RPCAddr, c.NodeName, c.BootstrapExpect = addr, name, 3
		c.ServerJoin = []string{rest[0].RPCAddr(), rest[1].RPCAddr()}
	})
	if back.NodeID() == oldID {
		t.Fatal("a server with a fresh data dir must get a new ID")
	}
	WaitFor(t, 15*time.Second, func() (bool, string) {
		cfg, _, err := leader.raftConfiguration()
		if err != nil {
			return false, err.Error()
		}
		var ids []raft.ServerID
		found := false
		for _, s := range cfg.Servers {
			ids = append(ids, s.ID)
			if string(s.ID) == oldID {
				return false, fmt.Sprintf("old ID still in %v", ids)
			}
			if string(s.ID) == back.NodeID() && string(s.Address) == addr {
				found = true
			}
		}
		return found && len(cfg.Servers) == 3, fmt.Sprintf("configuration %v", cfg.Servers)
	})
	idx := kvWrite(t, leader, "after-rejoin", "yes")
	WaitFor(t, 10*time.Second, func() (bool, string) {
		v, ok := kvStale(back, "after-rejoin")
		return ok && v == "yes", fmt.Sprintf("rejoined server has not applied index %d", idx)
	})
}

// The leader refuses a peer that claims its own address under another ID.
func TestRaftAddPeerRefusesTheLeadersAddress(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	var resp structs.GenericResponse
	err := s.RPC("Operator.RaftAddPeer", &structs.RaftPeerAddRequest{ID: "impostor", Address: s.RPCAddr()}, &resp)
	if err == nil {
		t.Fatal("adding a peer at the leader's address must fail")
	}
	cfg, _, _ := s.raftConfiguration()
	if len(cfg.Servers) != 1 || string(cfg.Servers[0].ID) != s.NodeID() {
		t.Fatalf("the configuration changed: %v", cfg.Servers)
	}
}
