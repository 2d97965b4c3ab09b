//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A server lost for good is replaced by hand, the way an operator does it:
// `operator raft remove-peer` takes the dead one out of the quorum and
// `server join` brings a fresh server in. The new server holds the data:
// with it, the cluster survives losing one more of the original servers.
func TestDeadServerIsReplacedWithRemovePeerAndJoin(t *testing.T) {
	servers := startServerCluster(t, 3)
	registerJob(t, servers[0], mockJob("kept", 1), 30*time.Second)

	leader := waitForAgreedLeader(t, servers, 30*time.Second, "")
	var dead *agent
	var rest []*agent
	for _, s := range servers {
		if dead == nil && s.rpcAddr() != leader {
			dead = s
		} else {
			rest = append(rest, s)
		}
	}
	dead.kill()

	out, code := rest[0].cli("operator", "raft", "remove-peer", "-peer-address="+dead.rpcAddr())
	if code != 0 || !strings.Contains(out, "Removed peer") {
		t.Fatalf("remove-peer: exit %d\n%s", code, out)
	}
	waitForPeers(t, rest[0], 2)

	// A new server that knows nobody waits to be joined.
	fresh := newAgent(t, agentSpec{name: "s4", extra: `
server {
  enabled                = true
  bootstrap_expect       = 0
  failover_heartbeat_ttl = "10s"
}`})
	waitFor(t, 30*time.Second, func() (bool, string) {
		_, err := fresh.api().Agent().Self()
		return err == nil, fmt.Sprintf("the new server's HTTP API: %v", err)
	})
	out, code = fresh.cli("server", "join", rest[1].rpcAddr())
	if code != 0 || !strings.Contains(out, "Joined 1 servers") {
		t.Fatalf("server join: exit %d\n%s", code, out)
	}
	waitForPeers(t, rest[0], 3)
	waitFor(t, 30*time.Second, func() (bool, string) {
		job, _, err := fresh.api().Jobs().Info("kept", nil)
		return err == nil && job.ID != nil && *job.ID == "kept", fmt.Sprintf("the new server has not got the job: %v", err)
	})

	// Kill one more original: the new server and the last original are a
	// quorum of the three and still take writes.
	lost := rest[0]
	lost.kill()
	survivors := []*agent{rest[1], fresh}
	waitForAgreedLeader(t, survivors, 30*time.Second, lost.rpcAddr())
	registerJob(t, fresh, mockJob("after", 1), 30*time.Second)
	waitFor(t, 30*time.Second, func() (bool, string) {
		_, _, err := rest[1].api().Jobs().Info("after", nil)
		return err == nil, fmt.Sprintf("a write after the second loss did not replicate: %v", err)
	})
}

// waitForPeers waits until s reports n raft peers.
func waitForPeers(t *testing.T, s *agent, n int) {
	t.Helper()
	waitFor(t, 30*time.Second, func() (bool, string) {
		p, err := s.api().Status().Peers()
		return err == nil && len(p) == n, fmt.Sprintf("%s sees peers %v (%v), want %d", s.name, p, err, n)
	})
}
