package nomad

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// waitPeers waits until s's raft configuration holds n servers.
func waitPeers(t *testing.T, s *Server, n int) {
	t.Helper()
	WaitFor(t, 10*time.Second, func() (bool, string) {
		var peers []string
		if err := s.RPC("Status.Peers", &structs.GenericRequest{}, &peers); err != nil {
			return false, err.Error()
		}
		return len(peers) == n, fmt.Sprintf("peers %v, want %d", peers, n)
	})
}

// waiting starts a server that neither bootstraps nor knows anyone: it
// waits to be joined.
func waiting(t *testing.T, name string, cb func(*Config)) *Server {
	return testServer(t, func(c *Config) {
		c.BootstrapExpect = 0
		c.NodeName = name
		if cb != nil {
			cb(c)
		}
	})
}

func TestJoinNowAddsWaitingServersFromEitherSide(t *testing.T) {
	s1 := testServer(t, func(c *Config) { c.NodeName = "s1" })
	WaitForLeader(t, 10*time.Second, s1)
	s2 := waiting(t, "s2", nil)
	s3 := waiting(t, "s3", nil)

	// From inside the cluster: s1 brings s2 in.
	if n, err := s1.JoinNow([]string{s2.RPCAddr()}); n != 1 || err != nil {
		t.Fatalf("s1 joining s2: joined %d, err %v", n, err)
	}
	waitPeers(t, s1, 2)
	// From outside: s3 asks s1, which knows the leader.
	if n, err := s3.JoinNow([]string{s1.RPCAddr()}); n != 1 || err != nil {
		t.Fatalf("s3 joining s1: joined %d, err %v", n, err)
	}
	waitPeers(t, s1, 3)
	WaitForLeader(t, 10*time.Second, s1, s2, s3)

	// The joined servers replicate: a write through s3 reaches s2.
	kvWrite(t, s3, "joined", "yes")
	WaitFor(t, 5*time.Second, func() (bool, string) {
		v, ok := kvStale(s2, "joined")
		return ok && v == "yes", "s2 has not got the write"
	})

	// Joining a member again is a no-op that counts as joined.
	if n, err := s2.JoinNow([]string{s1.RPCAddr(), s3.RPCAddr()}); n != 2 || err != nil {
		t.Fatalf("re-joining members: joined %d, err %v", n, err)
	}
	waitPeers(t, s1, 3)
}

func TestJoinNowRefusesWhatCannotJoin(t *testing.T) {
	s1 := testServer(t, func(c *Config) { c.NodeName = "s1" })
	other := testServer(t, func(c *Config) { c.NodeName = "other" })
	WaitForLeader(t, 10*time.Second, s1)
	WaitForLeader(t, 10*time.Second, other)
	elsewhere := waiting(t, "elsewhere", func(c *Config) { c.Region = "r2" })

	cases := []struct {
		name  string
		addrs []string
		want  string
	}{
		{"nothing", nil, "no address to join"},
		{"another cluster", []string{other.RPCAddr()}, "already belongs to another cluster"},
		{"another region", []string{elsewhere.RPCAddr()}, `in region "r2"`},
		{"nobody there", []string{"127.0.0.1:1"}, "contacting 127.0.0.1:1"},
	}
	for _, tc := range cases {
		n, err := s1.JoinNow(tc.addrs)
		if n != 0 || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: joined %d, err %v; want 0 and an error containing %q", tc.name, n, err, tc.want)
		}
	}
	// One good address among bad ones still joins, and says what failed.
	good := waiting(t, "good", nil)
	n, err := s1.JoinNow([]string{other.RPCAddr(), good.RPCAddr()})
	if n != 1 || err == nil || !strings.Contains(err.Error(), other.RPCAddr()) {
		t.Fatalf("mixed join: joined %d, err %v", n, err)
	}
	waitPeers(t, s1, 2)
	// The refused ones were left alone.
	waitPeers(t, other, 1)
	var peers []string
	if err := elsewhere.RPC("Status.Peers", &structs.GenericRequest{}, &peers); err == nil && len(peers) != 0 {
		t.Fatalf("the other region's server got peers %v", peers)
	}
}

// A server without a cluster that is refused an address (another
// region's) must not keep that address to retry: a later join would ask
// the other region's leader to take it in, merging two regions' raft
// clusters.
func TestJoinNowKeepsRefusedAddressesOutOfTheRetryList(t *testing.T) {
	other := testServer(t, func(c *Config) { c.NodeName = "other-region"; c.Region = "r2" })
	s1 := testServer(t, func(c *Config) { c.NodeName = "s1" })
	WaitForLeader(t, 10*time.Second, other)
	WaitForLeader(t, 10*time.Second, s1)
	fresh := waiting(t, "fresh", nil)

	if n, err := fresh.JoinNow([]string{other.RPCAddr()}); n != 0 || err == nil || !strings.Contains(err.Error(), `in region "r2"`) {
		t.Fatalf("joining another region: joined %d, err %v", n, err)
	}
	for _, a := range fresh.joinAddrs() {
		if a == other.RPCAddr() {
			t.Fatalf("the refused address %s is in the retry list %v", a, fresh.joinAddrs())
		}
	}
	if n, err := fresh.JoinNow([]string{s1.RPCAddr()}); n != 1 || err != nil {
		t.Fatalf("joining s1: joined %d, err %v", n, err)
	}
	waitPeers(t, s1, 2)
	var peers []string
	if err := other.RPC("Status.Peers", &structs.GenericRequest{}, &peers); err != nil || len(peers) != 1 {
		t.Fatalf("the other region's cluster took a server in: peers %v, err %v", peers, err)
	}
}

// With ACLs on, a server without state holds no server secret, so it
// cannot ask the leader to add it (anyone could, or the raft configuration
// would be anyone's); a member of the cluster adds it from inside, and it
// then receives the secret with the rest of the state.
func TestWithACLsANewServerIsAddedFromInsideTheCluster(t *testing.T) {
	acls := func(c *Config) { c.ACLEnabled = true }
	s1 := testServer(t, func(c *Config) { c.NodeName = "s1"; c.ACLEnabled = true })
	WaitForLeader(t, 10*time.Second, s1)
	WaitFor(t, 5*time.Second, func() (bool, string) { return s1.serverSecret() != "", "no server secret" })
	s2 := waiting(t, "s2", acls)

	n, err := s2.JoinNow([]string{s1.RPCAddr()})
	if n != 1 || !errors.Is(err, structs.ErrPermissionDenied) || !strings.Contains(err.Error(), "Operator.RaftAddPeer") {
		t.Fatalf("a server without state asking to be added: joined %d, err %v; want the leader to refuse", n, err)
	}
	waitPeers(t, s1, 1)

	if n, err := s1.JoinNow([]string{s2.RPCAddr()}); n != 1 || err != nil {
		t.Fatalf("s1 adding s2: joined %d, err %v", n, err)
	}
	waitPeers(t, s1, 2)
	WaitFor(t, 10*time.Second, func() (bool, string) {
		return s2.serverSecret() == s1.serverSecret(), "s2 has not received the server secret"
	})
}

// A server joined from outside while the cluster has no leader (an
// election, or a lost quorum) has nobody to add it yet: it keeps trying,
// and joins once the cluster has a leader again. A server started without
// join addresses has no join loop of its own, so JoinNow must leave one
// running; before it did, one attempt was made, JoinNow reported the
// address joined, and the server never joined.
func TestJoinNowFromOutsideJoinsOnceTheClusterHasALeaderAgain(t *testing.T) {
	s1 := testServer(t, func(c *Config) { c.NodeName = "s1" })
	WaitForLeader(t, 10*time.Second, s1)
	s2 := waiting(t, "s2", nil)
	if n, err := s1.JoinNow([]string{s2.RPCAddr()}); n != 1 || err != nil {
		t.Fatalf("s1 joining s2: joined %d, err %v", n, err)
	}
	waitPeers(t, s1, 2)
	WaitForLeader(t, 10*time.Second, s1, s2)

	// Without s2, s1 alone is no quorum: it knows no leader.
	s2Addr, s2Dir := s2.RPCAddr(), s2.config.DataDir
	s2.Shutdown()
	WaitFor(t, 10*time.Second, func() (bool, string) {
		addr, _ := s1.Leader()
		return addr == "", "s1 still knows leader " + addr
	})

	s3 := waiting(t, "s3", nil)
	if n, err := s3.JoinNow([]string{s1.RPCAddr()}); n != 1 || err != nil {
		t.Fatalf("s3 joining s1: joined %d, err %v", n, err)
	}
	if cfg, _, _ := s1.raftConfiguration(); len(cfg.Servers) != 2 {
		t.Fatalf("s3 joined a cluster without a leader: %+v", cfg.Servers)
	}

	// s2 comes back: the cluster elects, and s3 is added.
	testServer(t, func(c *Config) {
		c.NodeName, c.DataDir, c.RPCAddr, c.BootstrapExpect = "s2", s2Dir, s2Addr, 0
	})
	WaitFor(t, 20*time.Second, func() (bool, string) {
		cfg, _, err := s3.raftConfiguration()
		return err == nil && containsServer(cfg, s3.NodeID()) && len(cfg.Servers) == 3,
			fmt.Sprintf("s3's raft configuration: %d servers, %v", len(cfg.Servers), err)
	})
}
