package nomad

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// ACLs on a three-server cluster: requests to a follower are forwarded,
// every server resolves what the leader wrote, the reset file is the
// leader's, and tokens survive the leader's loss.
func TestACLsOnAThreeServerCluster(t *testing.T) {
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
	leader := WaitForLeader(t, 10*time.Second, servers...)
	var follower *Server
	for _, s := range servers {
		if s != leader {
			follower = s
			break
		}
	}

	boot := bootstrapACL(t, follower)
	upsertPolicy(t, follower, boot.SecretID, "readers", `namespace "default" { policy = "read" }`)
	tok := createToken(t, follower, boot.SecretID, &structs.ACLToken{Type: structs.ACLClientToken, Policies: []string{"readers"}})
	for _, s := range servers {
		WaitFor(t, 5*time.Second, func() (bool, string) {
			a, err := s.ResolveToken(tok.SecretID)
			return err == nil && a.AllowNamespaceOperation("default", "read-job"), fmt.Sprintf("%s does not resolve the token yet: %v", s.config.NodeName, err)
		})
	}

	err := follower.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{WriteRequest: write("")}, &structs.ACLTokenUpsertResponse{})
	leaderFile := filepath.Join(leader.config.DataDir, "acl-bootstrap-reset")
	if err == nil || !strings.Contains(err.Error(), leaderFile) {
		t.Fatalf("a second bootstrap through a follower must name the leader's reset file %s: %v", leaderFile, err)
	}

	leader.Shutdown()
	var rest []*Server
	for _, s := range servers {
		if s != leader {
			rest = append(rest, s)
		}
	}
	newLeader := WaitForLeader(t, 10*time.Second, rest...)
	var out structs.ACLTokenListResponse
	if err := newLeader.RPC("ACL.ListTokens", &structs.ACLTokenListRequest{QueryOptions: query(boot.SecretID)}, &out); err != nil || len(out.Tokens) != 2 {
		t.Fatalf("after failover: %d tokens, %v", len(out.Tokens), err)
	}
	if _, err := newLeader.ResolveToken(tok.SecretID); err != nil {
		t.Fatalf("the new leader does not resolve the token: %v", err)
	}
	if err := os.WriteFile(filepath.Join(newLeader.config.DataDir, "acl-bootstrap-reset"), []byte(itoa(boot.CreateIndex)), 0o600); err != nil {
		t.Fatal(err)
	}
	if again := bootstrapACL(t, newLeader); again.SecretID == boot.SecretID {
		t.Fatal("the reset bootstrap must make a new token")
	}
}

func aclClusterServer(t *testing.T, i int) *Server {
	return TestServer(t, func(c *Config) {
		c.BootstrapExpect = 3
		c.NodeName = fmt.Sprintf("s%d", i)
		c.ACLEnabled = true
	})
}
