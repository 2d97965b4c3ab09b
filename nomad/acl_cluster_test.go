package nomad

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// ACLs on a three-server cluster: requests to a follower are forwarded,
// every server resolves what the leader wrote, the reset file is the
// leader's, and tokens survive the leader's loss.
//
// Raft may move leadership on its own while the test runs (see
// election_helpers_test.go), so writes are sent again when an election
// loses their answer, and "the leader" is whichever server leads at the
// moment it matters.
func TestACLsOnAThreeServerCluster(t *testing.T) {
	t.Parallel()
	var servers []*Server
	for i := 0; i < 3; i++ {
		servers = append(servers, aclClusterServer(t, i))
	}
	for _, s := range servers {
		for _, o := range servers {
			if o != s {
				s.Join(o.RPCAddr())
			}
		}
	}
	follower := followerOf(servers, WaitForLeader(t, 10*time.Second, servers...))

	bootSecret := structs.GenerateUUID()
	bootstrapThroughElections(t, follower, bootSecret)
	writeThroughElections(t, follower, "ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{
		Policies:     []*structs.ACLPolicy{{Name: "readers", Rules: `namespace "default" { policy = "read" }`}},
		WriteRequest: write(bootSecret)}, &structs.GenericResponse{})
	// Created twice if an election loses the first answer: harmless, the
	// test uses the secret it was given.
	var created structs.ACLTokenUpsertResponse
	writeThroughElections(t, follower, "ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{
		Tokens:       []*structs.ACLToken{{Type: structs.ACLClientToken, Policies: []string{"readers"}}},
		WriteRequest: write(bootSecret)}, &created)
	tok := created.Tokens[0]
	for _, s := range servers {
		WaitFor(t, 5*time.Second, func() (bool, string) {
			a, err := s.ResolveToken(tok.SecretID)
			return err == nil && a.AllowNamespaceOperation("default", "read-job"), fmt.Sprintf("%s does not resolve the token yet: %v", s.config.NodeName, err)
		})
	}

	// A second bootstrap through a follower names the reset file of the
	// server that leads: asked again if leadership moved during the call.
	for try := 0; ; try++ {
		leader := WaitForLeader(t, 10*time.Second, servers...)
		err := followerOf(servers, leader).RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{WriteRequest: write("")}, &structs.ACLTokenUpsertResponse{})
		lost := err != nil && strings.Contains(err.Error(), structs.ErrNoLeader.Error())
		if try < 5 && (lost || WaitForLeader(t, 10*time.Second, servers...) != leader) {
			continue
		}
		leaderFile := filepath.Join(leader.config.DataDir, "acl-bootstrap-reset")
		if err == nil || !strings.Contains(err.Error(), leaderFile) {
			t.Fatalf("a second bootstrap through a follower must name the leader's reset file %s: %v", leaderFile, err)
		}
		break
	}

	var tokensBefore structs.ACLTokenListResponse
	if err := follower.RPC("ACL.ListTokens", &structs.ACLTokenListRequest{QueryOptions: query(bootSecret)}, &tokensBefore); err != nil {
		t.Fatal(err)
	}
	leader := WaitForLeader(t, 10*time.Second, servers...)
	leader.Shutdown()
	var rest []*Server
	for _, s := range servers {
		if s != leader {
			rest = append(rest, s)
		}
	}
	newLeader := WaitForLeader(t, 10*time.Second, rest...)
	var out structs.ACLTokenListResponse
	if err := newLeader.RPC("ACL.ListTokens", &structs.ACLTokenListRequest{QueryOptions: query(bootSecret)}, &out); err != nil || !sameAccessors(out.Tokens, tokensBefore.Tokens) {
		t.Fatalf("after failover: tokens %v (%v), want %v", accessors(out.Tokens), err, accessors(tokensBefore.Tokens))
	}
	if _, err := newLeader.ResolveToken(tok.SecretID); err != nil {
		t.Fatalf("the new leader does not resolve the token: %v", err)
	}

	// Reset: the file goes on the leader, and on the other server too in
	// case leadership moves before the bootstrap reaches it.
	first, err := newLeader.State().ACLBootstrapIndex()
	if err != nil || first == 0 {
		t.Fatalf("bootstrap index %d, %v", first, err)
	}
	for _, s := range rest {
		if err := os.WriteFile(filepath.Join(s.config.DataDir, "acl-bootstrap-reset"), []byte(itoa(first)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	againSecret := structs.GenerateUUID()
	bootstrapThroughElections(t, newLeader, againSecret)
	if again, _ := newLeader.State().ACLBootstrapIndex(); again <= first {
		t.Fatalf("the reset bootstrap left the bootstrap index at %d, want past %d", again, first)
	}
}

// followerOf returns a server of servers other than leader.
func followerOf(servers []*Server, leader *Server) *Server {
	for _, s := range servers {
		if s != leader {
			return s
		}
	}
	return nil
}

// bootstrapThroughElections bootstraps ACLs (or resets the bootstrap)
// through s with a secret the test chose, and sends the request again
// while an election loses its answer. A bootstrap happens once, so a
// retry after an attempt that did commit is refused; with the secret
// chosen here the test can tell: it must then resolve to a management
// token.
func bootstrapThroughElections(t *testing.T, s *Server, secret string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	lost := false
	for {
		var out structs.ACLTokenUpsertResponse
		err := s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{BootstrapSecret: secret, WriteRequest: write("")}, &out)
		switch {
		case err == nil:
			if len(out.Tokens) != 1 || out.Tokens[0].SecretID != secret {
				t.Fatalf("bootstrap answered %+v", out.Tokens)
			}
			return
		case lost && (errors.Is(err, structs.ErrACLBootstrapDone) || strings.Contains(err.Error(), "Invalid bootstrap reset index")):
			refused := err
			WaitFor(t, 5*time.Second, func() (bool, string) {
				a, err := s.ResolveToken(secret)
				return err == nil && a.IsManagement(), fmt.Sprintf("bootstrap refused after a lost answer (%v), and its secret does not resolve: %v", refused, err)
			})
			return
		case strings.Contains(err.Error(), structs.ErrNoLeader.Error()) && time.Now().Before(deadline):
			lost = true
			WaitFor(t, 10*time.Second, func() (bool, string) {
				addr, _ := s.Leader()
				return addr != "", s.config.NodeName + " knows no leader"
			})
		default:
			t.Fatalf("bootstrap: %v", err)
		}
	}
}

func accessors(list []*structs.ACLTokenListStub) []string {
	var out []string
	for _, tok := range list {
		out = append(out, tok.AccessorID)
	}
	sort.Strings(out)
	return out
}

func sameAccessors(a, b []*structs.ACLTokenListStub) bool {
	return len(a) > 0 && slices.Equal(accessors(a), accessors(b))
}

func aclClusterServer(t *testing.T, i int) *Server {
	return testServer(t, func(c *Config) {
		c.BootstrapExpect = 3
		c.NodeName = fmt.Sprintf("s%d", i)
		c.ACLEnabled = true
	})
}
