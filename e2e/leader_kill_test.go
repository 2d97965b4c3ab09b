//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// mockJob is a service job of count mock tasks that run for an hour.
func mockJob(id string, count int) string {
	return fmt.Sprintf(`
job %q {
  datacenters = ["dc1"]
  type        = "service"
  group "g" {
    count = %d
    task "t" {
      driver = "mock_driver"
      config {
        run_for = "1h"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`, id, count)
}

// startServerCluster starts n servers that join each other, with fast
// heartbeats but a failover TTL that gives clients time to find the new
// leader.
func startServerCluster(t *testing.T, n int) []*agent {
	t.Helper()
	return startServerClusterTTL(t, n, "1s", "1s")
}

// startServerClusterTTL is startServerCluster with the given
// min_heartbeat_ttl and heartbeat_grace.
func startServerClusterTTL(t *testing.T, n int, minTTL, grace string) []*agent {
	t.Helper()
	var rpcPorts []int
	for range n {
		rpcPorts = append(rpcPorts, freePort(t))
	}
	var servers []*agent
	for i := range n {
		var join []string
		for j, p := range rpcPorts {
			if j != i {
				join = append(join, fmt.Sprintf(`"127.0.0.1:%d"`, p))
			}
		}
		extra := fmt.Sprintf(`
server {
  enabled                = true
  bootstrap_expect       = %d
  min_heartbeat_ttl      = %q
  heartbeat_grace        = %q
  failover_heartbeat_ttl = "10s"
  server_join {
    retry_join     = [%s]
    retry_interval = "200ms"
  }
}`, n, minTTL, grace, strings.Join(join, ", "))
		servers = append(servers, newAgentWithRPCPort(t, agentSpec{name: fmt.Sprintf("s%d", i+1), extra: extra}, rpcPorts[i]))
	}
	waitForAgreedLeader(t, servers, 30*time.Second, "")
	return servers
}

// Killing the leader (kill -9) right after it accepted a job loses
// nothing: a new leader is elected, finishes the job's placements, accepts
// a new job and a scale-up through a surviving server, and no alloc is
// placed twice. The client keeps heartbeating through the failover, so
// none of its allocs is lost either.
func TestLeaderKilledUnderLoadLosesAndDuplicatesNothing(t *testing.T) {
	servers := startServerCluster(t, 3)
	client := startClient(t, "c1", servers...)
	leaderAddr := waitForAgreedLeader(t, servers, 30*time.Second, "")
	waitForReadyNodes(t, servers[0], "c1")

	var leader *agent
	var rest []*agent
	for _, s := range servers {
		if s.rpcAddr() == leaderAddr {
			leader = s
		} else {
			rest = append(rest, s)
		}
	}
	registerJob(t, leader, mockJob("first", 5), 10*time.Second)
	killedAt := time.Now()
	leader.kill()
	newLeader := waitForAgreedLeader(t, rest, 30*time.Second, leaderAddr)
	t.Logf("new leader %s agreed %s after the kill", newLeader, time.Since(killedAt))

	survivor := rest[0]
	registerJob(t, survivor, mockJob("second", 5), 20*time.Second)
	registerJob(t, survivor, mockJob("first", 8), 20*time.Second)
	want := map[string]int{"first": 8, "second": 5}
	waitFor(t, 30*time.Second, func() (bool, string) {
		for job, n := range want {
			allocs, err := jobAllocs(survivor, job)
			if err != nil {
				return false, err.Error()
			}
			if got := len(runningAllocs(allocs)); got != n {
				return false, fmt.Sprintf("%s: %d of %d running: %s", job, got, n, describeAllocs(allocs))
			}
		}
		return true, ""
	})
	t.Logf("all placements running %s after the kill", time.Since(killedAt))

	for _, s := range rest {
		for job := range want {
			waitForEvalsDone(t, s, job)
		}
	}
	for job, n := range want {
		allocs, err := jobAllocs(survivor, job)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]string{}
		live := 0
		for _, a := range allocs {
			if a.ClientStatus == "lost" {
				t.Errorf("%s: alloc %s was lost in the failover", job, a.ID[:8])
			}
			if a.DesiredStatus != "run" {
				continue
			}
			live++
			if other, dup := names[a.Name]; dup {
				t.Errorf("%s: %s placed twice (%s and %s)", job, a.Name, other[:8], a.ID[:8])
			}
			names[a.Name] = a.ID
		}
		if live != n {
			t.Errorf("%s: %d allocs desired running, want %d: %s", job, live, n, describeAllocs(allocs))
		}
	}
	if st := nodeStatus(survivor, client.name); st != "ready" {
		t.Errorf("client node is %s after the failover", st)
	}
	waitForAgreedLeader(t, rest, 5*time.Second, leaderAddr)
}
