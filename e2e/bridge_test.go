//go:build e2e

package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/client/network/nettest"
)

// bridgeSubnet is the e2e agents' bridge network, apart from the host's,
// docker's and the unit tests' ranges.
const (
	bridgeName   = "drove2e"
	bridgeSubnet = "10.251.30.0/24"
)

// bridgeClient is a client block on the e2e bridge.
func bridgeClient(servers string) string {
	return fmt.Sprintf(`
client {
  enabled               = true
  %s
  cni_path              = "/usr/lib/cni"
  bridge_network_name   = %q
  bridge_network_subnet = %q
}
`, servers, bridgeName, bridgeSubnet)
}

// bridgeExecJob is an exec job in bridge mode: group web runs two allocs
// that both serve on 8080 in their namespaces, each behind its own
// dynamic host port; group fixed serves on 8080 behind a static one. The
// page names the alloc and the port variables the task got.
func bridgeExecJob(staticPort int) string {
	group := func(name string, count int, port string) string {
		return fmt.Sprintf(`
  group %q {
    count = %d
    network {
      mode = "bridge"
      port "http" {
        %s
        to = 8080
      }
      dns {
        servers = ["10.9.9.9"]
      }
    }
    task "server" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "cat /etc/resolv.conf; exec busybox httpd -f -p 8080 -h /local"]
      }
      template {
        data        = "{{ env \"NOMAD_ALLOC_ID\" }} port={{ env \"NOMAD_PORT_http\" }} host_port={{ env \"NOMAD_HOST_PORT_http\" }} addr={{ env \"NOMAD_ADDR_http\" }} alloc_port={{ env \"NOMAD_ALLOC_PORT_http\" }} ip={{ env \"NOMAD_IP_http\" }}\n"
        destination = "local/index.html"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }`, name, count, port)
	}
	return `job "bridged" {` + group("web", 2, "") + group("fixed", 1, fmt.Sprintf("static = %d", staticPort)) + "\n}\n"
}

// hostPortOf returns the alloc's host port for label.
func hostPortOf(t *testing.T, a *api.Allocation, label string) int {
	t.Helper()
	for _, p := range a.AllocatedResources.Shared.Ports {
		if p.Label == label {
			return p.Value
		}
	}
	t.Fatalf("alloc %s has no port %q: %+v", a.ID, label, a.AllocatedResources.Shared.Ports)
	return 0
}

// waitRunning waits until the job has n running allocs.
func waitRunning(t *testing.T, s *agent, jobID string, n int) []*api.Allocation {
	t.Helper()
	var out []*api.Allocation
	waitFor(t, 90*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(s, jobID)
		if err != nil {
			return false, err.Error()
		}
		out = runningAllocs(allocs)
		return len(out) == n, describeAllocs(allocs)
	})
	return out
}

// netTraces lists what of the allocs' networks is on the host: their
// namespaces, the client's records, and iptables rules naming the e2e
// subnet.
func netTraces(t *testing.T, c *agent, allocIDs []string) []string {
	t.Helper()
	var out []string
	for _, id := range allocIDs {
		if _, err := os.Stat(filepath.Join("/var/run/netns", id)); err == nil {
			out = append(out, "netns "+id)
		}
	}
	_ = filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Base(filepath.Dir(p)) == "network" && strings.HasSuffix(p, ".json") {
			out = append(out, "record "+p)
		}
		return nil
	})
	links, _ := exec.Command("ip", "-o", "link", "show", "master", bridgeName).CombinedOutput()
	for _, l := range strings.Split(strings.TrimSpace(string(links)), "\n") {
		if l != "" {
			out = append(out, "veth "+strings.Fields(l)[1])
		}
	}
	for _, table := range []string{"nat", "filter"} {
		rules, _ := exec.Command("iptables-save", "-t", table).CombinedOutput()
		for _, l := range strings.Split(string(rules), "\n") {
			if !strings.HasPrefix(l, ":") && !strings.HasPrefix(l, "#") && (strings.Contains(l, "10.251.30.") || strings.Contains(l, `"`+bridgeName+`"`)) {
				out = append(out, table+" "+l)
			}
		}
	}
	return out
}

func allocIDs(allocs []*api.Allocation) []string {
	out := make([]string, len(allocs))
	for i, a := range allocs {
		out[i] = a.ID
	}
	return out
}

// An exec job in bridge mode through real agents: two allocs of a group
// both serve on 8080 in their own namespaces, each reachable on 127.0.0.1
// at its own host port, a static port as well; the tasks get Nomad's
// port variables and the dns block's resolv.conf. Stopping the job
// leaves no namespace, veth, rule or record behind.
func TestBridgeExecJobServesOnItsHostPortsAndLeavesNothingWhenStopped(t *testing.T) {
	skipUnlessBridge(t)
	a := newAgent(t, agentSpec{name: "bridge", extra: "server {\n  enabled = true\n  bootstrap_expect = 1\n}\n" + bridgeClient("")})
	a.waitOneReadyNode(t)
	t.Cleanup(func() { stopJobAndWait(t, a, "bridged") })
	static := freePort(t)
	registerJob(t, a, bridgeExecJob(static), 30*time.Second)
	allocs := waitRunning(t, a, "bridged", 3)
	ids := allocIDs(allocs)
	for _, al := range allocs {
		port := hostPortOf(t, al, "http")
		if al.TaskGroup == "fixed" && port != static {
			t.Fatalf("the fixed group's port is %d, want the static %d", port, static)
		}
		want := fmt.Sprintf("%s port=8080 host_port=%d addr=127.0.0.1:%d alloc_port=8080 ip=127.0.0.1\n", al.ID, port, port)
		waitForPage(t, "http://127.0.0.1:"+strconv.Itoa(port)+"/index.html", want)
		if info, _, err := a.api().Allocations().Info(al.ID, nil); err != nil || info.NetworkStatus == nil ||
			!strings.HasPrefix(info.NetworkStatus.Address, "10.251.30.") || info.NetworkStatus.InterfaceName != "eth0" {
			t.Errorf("alloc %s: network status %+v (%v), want its eth0 address on the bridge", al.ID, info.NetworkStatus, err)
		}
		logs, _ := a.cli("alloc", "logs", al.ID, "server")
		if !strings.Contains(logs, "nameserver 10.9.9.9") {
			t.Errorf("alloc %s's resolv.conf is not its dns block's:\n%s", al.ID, logs)
		}
	}
	if tr := netTraces(t, a, ids); len(tr) == 0 {
		t.Fatal("three bridge-mode allocs run and nothing of their networks is on the host")
	}
	stopJobAndWait(t, a, "bridged")
	waitFor(t, 30*time.Second, func() (bool, string) {
		tr := netTraces(t, a, ids)
		return len(tr) == 0, "left on the host after the stop:\n" + strings.Join(tr, "\n")
	})
}

// A client killed with SIGKILL and started again re-attaches to its
// running allocs, keeping their namespaces and port mappings; killed
// again while the job is stopped, it removes the allocs' namespaces, port
// mappings and rules once it is started again.
func TestBridgeClientKilledAndRestartedCleansUpAnAllocStoppedMeanwhile(t *testing.T) {
	skipUnlessBridge(t)
	s := startServer(t, "server")
	c := newAgent(t, agentSpec{name: "bridge-client", extra: bridgeClient(fmt.Sprintf("servers = [%q]", s.rpcAddr()))})
	waitForReadyNodes(t, s, "bridge-client")
	t.Cleanup(func() { stopJobAndWait(t, s, "bridged") })
	registerJob(t, s, bridgeExecJob(freePort(t)), 30*time.Second)
	allocs := waitRunning(t, s, "bridged", 3)
	ids := allocIDs(allocs)
	port := hostPortOf(t, allocs[0], "http")
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/index.html"
	waitFor(t, 30*time.Second, func() (bool, string) {
		_, err := nettest.Get(url)
		return err == nil, fmt.Sprint(err)
	})

	// A restart re-attaches: the namespace and its mapping are kept, and
	// the task answers throughout.
	c.kill()
	if _, err := nettest.Get(url); err != nil {
		t.Fatalf("with its client killed the alloc no longer answers: %v", err)
	}
	c.start()
	waitFor(t, 60*time.Second, func() (bool, string) {
		u, err := c.api().Allocations().Stats(allocs[0].ID, nil)
		if err != nil {
			return false, "stats: " + err.Error()
		}
		return u.Tasks["server"] != nil, fmt.Sprintf("stats %+v", u)
	})
	if _, err := nettest.Get(url); err != nil {
		t.Fatalf("after the client's restart the alloc no longer answers: %v", err)
	}
	if a, _, err := s.api().Allocations().Info(allocs[0].ID, nil); err != nil || a.TaskStates["server"].Restarts != 0 || a.ClientStatus != "running" {
		t.Fatalf("after the client's restart: %v %+v", err, a)
	}

	c.kill()
	if _, _, err := s.api().Jobs().Deregister("bridged", false, nil); err != nil {
		t.Fatal(err)
	}
	if tr := netTraces(t, c, ids); len(tr) == 0 {
		t.Fatal("the killed client's allocs left nothing to clean up; the test proves nothing")
	}
	c.start()
	waitFor(t, 60*time.Second, func() (bool, string) {
		tr := netTraces(t, c, ids)
		return len(tr) == 0, "left on the host after the restart:\n" + strings.Join(tr, "\n")
	})
	if _, err := nettest.Get(url); err == nil {
		t.Fatalf("%s still answers after the restarted client stopped the alloc", url)
	}
}

func skipUnlessBridge(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("bridge networking needs root")
	}
	if _, err := os.Stat("/usr/lib/cni/bridge"); err != nil {
		t.Skip("no CNI plugins in /usr/lib/cni")
	}
	t.Cleanup(func() {
		_ = exec.Command("ip", "link", "del", bridgeName).Run()
		_ = os.RemoveAll("/var/lib/cni/networks/" + bridgeName)
	})
}
