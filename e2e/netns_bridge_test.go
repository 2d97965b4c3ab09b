//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// bridgeNetnsClient is a client block on a bridge of the client's own
// (each client's namespace has its own bridge, and host-local keeps its
// address store per network name on the shared host disk).
func bridgeNetnsClient(servers []string, bridge, subnet string) string {
	return fmt.Sprintf(`
client {
  enabled               = true
  servers               = [%s]
  cpu_total_compute     = 4000
  memory_total_mb       = 4096
  cni_path              = "/usr/lib/cni"
  bridge_network_name   = %q
  bridge_network_subnet = %q
}
`, strings.Join(servers, ", "), bridge, subnet)
}

// bridgeKeptJob serves its alloc ID on 8080 inside its namespace, behind
// a dynamic host port, and keeps its original through a disconnect.
const bridgeKeptJob = `
job "bridgekept" {
  datacenters = ["dc1"]
  type        = "service"
  group "g" {
    count = 1
` + keepOriginalFor5m + `
    network {
      mode = "bridge"
      port "http" {
        to = 8080
      }
    }
    task "server" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "exec busybox httpd -f -p 8080 -h /local"]
      }
      template {
        data        = "{{ env \"NOMAD_ALLOC_ID\" }}\n"
        destination = "local/index.html"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`

// A bridge-mode alloc through a real partition: its client is cut from
// the servers while the alloc keeps running in its namespace; a
// replacement is placed, in a namespace of its own, on the other client
// and answers there. After the heal the original is kept: it answers on
// its host port as before (the namespace and its port mapping survived
// the partition), and the replacement is stopped, its namespace gone.
func TestNetnsBridgeAllocKeptThroughAPartition(t *testing.T) {
	skipUnlessBridge(t)
	elapsed(t)
	c := startNetnsCluster(t, netnsClusterSpec{servers: 1})
	s := c.servers[0]
	for i, name := range []string{"b1", "b2"} {
		cn := c.net.addNode(name)
		c.nodes[name] = cn
		bridge := fmt.Sprintf("drvb%d-%d", c.net.subnet, i)
		t.Cleanup(func() { _ = os.RemoveAll("/var/lib/cni/networks/" + bridge) })
		c.clients[name] = cn.startAgentHostMounts(bridgeNetnsClient(c.rpcAddrs, bridge, fmt.Sprintf("10.252.%d.0/24", 10+i)))
	}
	waitForReadyNodes(t, s, "b1", "b2")
	t.Cleanup(func() { stopJobAndWait(t, s, "bridgekept") })
	registerJob(t, s, bridgeKeptJob, 30*time.Second)
	orig := waitRunning(t, s, "bridgekept", 1)[0]
	home := c.nodes[orig.NodeName]
	url := func(node *netnsNode, a *api.Allocation) string {
		return "http://" + node.ip + ":" + strconv.Itoa(hostPortOf(t, a, "http")) + "/index.html"
	}
	origURL := url(home, orig)
	waitForPage(t, origURL, orig.ID+"\n")

	cutAt := time.Now()
	home.fastTCPGiveUp()
	home.cut()
	var repl *api.Allocation
	waitFor(t, 60*time.Second, func() (bool, string) {
		if st := nodeStatus(s, orig.NodeName); st != "disconnected" {
			return false, orig.NodeName + " is " + st
		}
		allocs, err := jobAllocs(s, "bridgekept")
		if err != nil {
			return false, err.Error()
		}
		repl = nil
		for _, a := range allocs {
			if a.ID != orig.ID && a.DesiredStatus == "run" && a.ClientStatus == "running" {
				repl = a
			}
		}
		return repl != nil, "no running replacement: " + describeAllocs(allocs)
	})
	t.Logf("replaced on %s %s after the cut", repl.NodeName, time.Since(cutAt).Round(time.Millisecond))
	if repl.NodeName == orig.NodeName {
		t.Fatalf("the replacement went to the cut node %s", repl.NodeName)
	}
	waitForPage(t, url(c.nodes[repl.NodeName], repl), repl.ID+"\n")
	// The original's namespace is the client's to keep while it is away.
	if _, err := os.Stat(filepath.Join("/var/run/netns", orig.ID)); err != nil {
		t.Fatalf("the cut client's alloc lost its namespace: %v", err)
	}

	healAt := time.Now()
	home.heal()
	waitFor(t, 60*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(s, "bridgekept")
		if err != nil {
			return false, err.Error()
		}
		r := runningAllocs(allocs)
		if len(r) != 1 || r[0].ID != orig.ID {
			return false, describeAllocs(allocs)
		}
		if _, err := os.Stat(filepath.Join("/var/run/netns", repl.ID)); err == nil {
			return false, "the stopped replacement's namespace is still there"
		}
		return true, ""
	})
	t.Logf("original kept and replacement gone %s after the heal", time.Since(healAt).Round(time.Millisecond))
	waitForPage(t, origURL, orig.ID+"\n")
	if out, err := exec.Command("ip", "netns", "exec", c.nodes[repl.NodeName].ns, "ip", "-o", "link").CombinedOutput(); err == nil &&
		strings.Count(string(out), "veth") > 0 {
		t.Errorf("the replacement's veth is left on %s:\n%s", repl.NodeName, out)
	}
}
