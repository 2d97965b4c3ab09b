//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Three server processes on loopback find each other through retry_join,
// elect a leader, survive the leader being killed, and take the killed
// server back when it restarts from its data dir.
func TestThreeServerProcessesFormAClusterAndFailOver(t *testing.T) {
	names := []string{"s1", "s2", "s3"}
	rpcPorts := []int{freePort(t), freePort(t), freePort(t)}
	var agents []*agent
	for i, name := range names {
		var join []string
		for j, p := range rpcPorts {
			if j != i {
				join = append(join, fmt.Sprintf(`"127.0.0.1:%d"`, p))
			}
		}
		extra := fmt.Sprintf(`
server {
  enabled          = true
  bootstrap_expect = 3
  server_join {
    retry_join     = [%s]
    retry_interval = "200ms"
  }
}`, strings.Join(join, ", "))
		agents = append(agents, newAgentWithRPCPort(t, agentSpec{name: name, extra: extra}, rpcPorts[i]))
	}

	leader := waitForAgreedLeader(t, agents, 30*time.Second, "")
	peers, err := agents[0].api().Status().Peers()
	if err != nil || len(peers) != 3 {
		t.Fatalf("want 3 raft peers, got %v (%v)", peers, err)
	}

	var victim *agent
	var rest []*agent
	for _, a := range agents {
		if a.rpcAddr() == leader {
			victim = a
		} else {
			rest = append(rest, a)
		}
	}
	killed := time.Now()
	victim.kill()
	newLeader := waitForAgreedLeader(t, rest, 30*time.Second, leader)
	t.Logf("failover after killing the leader process took %s (new leader %s)", time.Since(killed), newLeader)

	victim.start()
	waitForAgreedLeader(t, agents, 30*time.Second, "")
	waitFor(t, 30*time.Second, func() (bool, string) {
		p, err := victim.api().Status().Peers()
		return err == nil && len(p) == 3, fmt.Sprintf("restarted server sees peers %v (%v)", p, err)
	})
}

func newAgentWithRPCPort(t *testing.T, spec agentSpec, rpcPort int) *agent {
	t.Helper()
	a := &agent{t: t, name: spec.name, dir: t.TempDir(), httpPort: freePort(t), rpcPort: rpcPort}
	writeConfig(t, a, spec.extra)
	a.start()
	t.Cleanup(a.stop)
	return a
}

// waitForAgreedLeader waits until every agent reports the same leader, one
// that is not notLeader (a server known to be dead).
func waitForAgreedLeader(t *testing.T, agents []*agent, timeout time.Duration, notLeader string) string {
	t.Helper()
	var leader string
	waitFor(t, timeout, func() (bool, string) {
		leader = ""
		for _, a := range agents {
			l, err := a.api().Status().Leader()
			if err != nil || l == "" || l == notLeader {
				return false, fmt.Sprintf("%s: leader %q (%v)", a.name, l, err)
			}
			if leader != "" && l != leader {
				return false, fmt.Sprintf("disagreement: %s vs %s", leader, l)
			}
			leader = l
		}
		return true, ""
	})
	return leader
}
