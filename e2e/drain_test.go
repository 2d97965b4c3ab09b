//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// drainJob is a 6-alloc service of Python HTTP servers whose group
// migrates 2 at a time, each judged healthy once its HTTP check has
// passed for a second.
const drainJob = `
job "drainweb" {
  datacenters = ["dc1"]
  type        = "service"
  group "web" {
    count = 6
    # A new job rolls out under a deployment, and allocs placed while it
    # runs are judged by this block; the drain's own pacing is migrate's.
    update {
      min_healthy_time = "1s"
      healthy_deadline = "1m"
    }
    migrate {
      max_parallel     = 2
      health_check     = "checks"
      min_healthy_time = "1s"
      healthy_deadline = "1m"
    }
    network {
      port "http" {}
    }
    service {
      name     = "drainweb"
      port     = "http"
      provider = "nomad"
      check {
        type     = "http"
        path     = "/"
        interval = "1s"
        timeout  = "1s"
      }
    }
    task "server" {
      driver = "raw_exec"
      config {
        command = "/usr/bin/python3"
        args    = ["-m", "http.server", "--bind", "127.0.0.1", "${NOMAD_PORT_http}"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`

// allocHTTPAddr is where an alloc's server listens (its "http" port).
func allocHTTPAddr(a *api.Allocation) string {
	if a.AllocatedResources == nil {
		return ""
	}
	for _, n := range a.AllocatedResources.Shared.Networks {
		for _, p := range n.DynamicPorts {
			if p.Label == "http" {
				return fmt.Sprintf("127.0.0.1:%d", p.Value)
			}
		}
	}
	return ""
}

// drainServing counts the job's allocs whose HTTP server answers now.
func drainServing(s *agent, jobID string) (int, string, error) {
	allocs, err := jobAllocs(s, jobID)
	if err != nil {
		return 0, "", err
	}
	client := &http.Client{Timeout: 500 * time.Millisecond}
	up := 0
	for _, a := range allocs {
		if a.ClientTerminalStatus() {
			continue
		}
		addr := allocHTTPAddr(a)
		if addr == "" {
			continue
		}
		resp, err := client.Get("http://" + addr + "/")
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			up++
		}
	}
	return up, describeAllocs(allocs), nil
}

// Issue 14: a node running all 6 allocs of a service with
// migrate { max_parallel = 2 } is drained while its tasks serve HTTP. A
// sampler probes every alloc's server all along: never more than 2 of the
// 6 are down. The drain completes (the node ends ineligible with its drain
// recorded complete), everything serves from the other two nodes, and
// `drover node drain -monitor`, started as soon as the drain is, exits 0.
func TestNodeDrainHonoursMaxParallelWhileServing(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("needs /usr/bin/python3 to serve HTTP")
	}
	server := startServerWith(t, "server", "")
	c1 := startClient(t, "c1", server)
	waitForReadyNodes(t, server, "c1")
	registerJob(t, server, drainJob, 30*time.Second)
	waitFor(t, 60*time.Second, func() (bool, string) {
		up, desc, err := drainServing(server, "drainweb")
		if err != nil {
			return false, err.Error()
		}
		return up == 6, fmt.Sprintf("%d of 6 serving: %s", up, desc)
	})
	// Every original must have its health decided before the drain can
	// move any (the drainer paces by settled allocs).
	waitFor(t, 30*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(server, "drainweb")
		if err != nil {
			return false, err.Error()
		}
		healthy := 0
		for _, a := range allocs {
			if a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil && *a.DeploymentStatus.Healthy {
				healthy++
			}
		}
		return healthy == 6, fmt.Sprintf("%d of 6 healthy", healthy)
	})
	startClient(t, "c2", server)
	startClient(t, "c3", server)
	waitForReadyNodes(t, server, "c1", "c2", "c3")
	// Its tasks would outlive the agents: stop the job first.
	t.Cleanup(func() { stopJobAndWait(t, server, "drainweb") })
	c1ID := nodeID(t, server, "c1")

	// The sampler runs until the drain is over.
	ctx, stopSampling := context.WithCancel(context.Background())
	var (
		wg                   sync.WaitGroup
		mu                   sync.Mutex
		worstDown, samples   int
		worstDesc, sampleErr string
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			up, desc, err := drainServing(server, "drainweb")
			mu.Lock()
			if err != nil {
				sampleErr = err.Error()
			} else {
				samples++
				if down := 6 - up; down > worstDown {
					worstDown, worstDesc = down, desc
				}
			}
			mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	defer func() {
		stopSampling()
		wg.Wait()
	}()

	started := time.Now()
	out, code := c1.cli("node", "drain", "-enable", "-deadline=5m", "-detach", "-yes", c1ID)
	if code != 0 {
		t.Fatalf("node drain -enable: exit %d\n%s", code, out)
	}
	// The real binary follows the drain until it completes.
	monOut, monCode := runWithTimeout(t, 3*time.Minute, c1, "node", "drain", "-monitor", "-yes", c1ID)
	stopSampling()
	wg.Wait()
	t.Logf("the drain of 6 allocs, 2 at a time, took %s", time.Since(started).Round(100*time.Millisecond))
	if monCode != 0 {
		t.Fatalf("node drain -monitor: exit %d\n%s", monCode, monOut)
	}
	for _, want := range []string{"drain complete", "All allocations on node", "migrated"} {
		if !strings.Contains(monOut, want) {
			t.Errorf("monitor output lacks %q:\n%s", want, monOut)
		}
	}

	mu.Lock()
	t.Logf("%d samples; most allocs down at once: %d", samples, worstDown)
	if sampleErr != "" {
		t.Logf("a sample failed: %s", sampleErr)
	}
	if worstDown > 2 {
		t.Errorf("%d of the group's allocs were down at once, max_parallel is 2: %s", worstDown, worstDesc)
	}
	if samples < 10 {
		t.Errorf("only %d samples taken during the drain", samples)
	}
	mu.Unlock()

	node, _, err := server.api().Nodes().Info(c1ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if node.DrainStrategy != nil || node.SchedulingEligibility != "ineligible" || node.LastDrain == nil || node.LastDrain.Status != "complete" {
		t.Fatalf("drained node: strategy %+v, eligibility %s, last drain %+v", node.DrainStrategy, node.SchedulingEligibility, node.LastDrain)
	}
	waitFor(t, 30*time.Second, func() (bool, string) {
		up, desc, err := drainServing(server, "drainweb")
		if err != nil {
			return false, err.Error()
		}
		allocs, _ := jobAllocs(server, "drainweb")
		for _, a := range runningAllocs(allocs) {
			if a.NodeID == c1ID {
				return false, "alloc still running on the drained node: " + desc
			}
		}
		return up == 6, fmt.Sprintf("%d of 6 serving after the drain: %s", up, desc)
	})
}

// nodeID returns the ID of the node called name.
func nodeID(t *testing.T, s *agent, name string) string {
	t.Helper()
	nodes, _, err := s.api().Nodes().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Name == name {
			return n.ID
		}
	}
	t.Fatalf("no node %s in %v", name, describeNodes(nodes))
	return ""
}

// runWithTimeout runs a drover CLI command against a, killing it after
// timeout.
func runWithTimeout(t *testing.T, timeout time.Duration, a *agent, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), args...)
	cmd.Env = append(os.Environ(), "DROVER_ADDR="+a.httpAddr(), "NOMAD_ADDR="+a.httpAddr())
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("drover %s did not finish in %s:\n%s", strings.Join(args, " "), timeout, out)
	}
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		}
		t.Fatal(err)
	}
	return string(out), 0
}
