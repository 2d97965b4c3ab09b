package nomad_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/client/testclient"
	"github.com/drover-sched/drover/helper/testutil/dockerimage"
	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/nomad/nomadtest"
	"github.com/drover-sched/drover/structs"
)

// secondInterface gives the test host a second interface: the host end of
// a veth pair whose other end is in a network namespace the test creates,
// with one address of the benchmark range (198.18.0.0/15, never routed),
// for a host_network to name. Both go when the test ends, however it ends.
func secondInterface(t *testing.T) (name, ip string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("creating network interfaces needs root")
	}
	id := fmt.Sprintf("%06d", rand.IntN(1_000_000))
	ns, name, peer := "drhn"+id, "drhn"+id+"a", "drhn"+id+"b"
	ip = fmt.Sprintf("198.18.%d.%d", rand.IntN(250)+1, 4*rand.IntN(60)+1)
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	run("netns", "add", ns)
	t.Cleanup(func() {
		// Deleting the host end removes its peer; the namespace goes last.
		_ = exec.Command("ip", "link", "del", name).Run()
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			t.Errorf("removing namespace %s: %v: %s", ns, err, out)
		}
	})
	run("link", "add", name, "type", "veth", "peer", "name", peer, "netns", ns)
	run("addr", "add", ip+"/30", "dev", name)
	run("link", "set", name, "up")
	run("-n", ns, "link", "set", peer, "up")
	return name, ip
}

// A port that asks for a host_network is placed on the node that has it
// and gets the network's address: the alloc's port and NOMAD_IP_ say so,
// and docker publishes the port on that address only.
func TestHostNetworkPortBindsOnItsNetworksAddressOnly(t *testing.T) {
	dockerimage.Client(t)
	image := dockerimage.Ensure(t)
	ifname, ip := secondInterface(t)

	s := nomadtest.Server(t, func(c *nomad.Config) { c.NumSchedulers = 1 })
	nomadtest.WaitForLeader(t, 5*time.Second, s)
	c := testclient.New(t, func(cfg *config.Config) {
		cfg.Servers = []string{s.RPCAddr()}
		cfg.EnabledDrivers = append(cfg.EnabledDrivers, "docker")
		cfg.HostNetworks = map[string]*structs.ClientHostNetworkConfig{"testnet": {Interface: ifname}}
	})
	wait.For(t, 20*time.Second, func() (bool, string) {
		n, _ := s.State().NodeByID(nil, c.NodeID())
		if n == nil || n.Status != structs.NodeStatusReady || !n.DriverHealthy("docker") {
			return false, "node not ready with docker"
		}
		return structs.NodeHasHostNetwork(n, "testnet"), "node has no host network testnet"
	})

	job := &structs.Job{ID: "private-web", Type: structs.JobTypeService, TaskGroups: []*structs.TaskGroup{{
		Name: "g", Count: 1,
		Networks: structs.Networks{{DynamicPorts: []structs.Port{{Label: "http", To: 8080, HostNetwork: "testnet"}}}},
		Tasks: []*structs.Task{{Name: "web", Driver: "docker", KillTimeout: time.Second,
			Config: map[string]any{"image": image, "ports": []any{"http"}, "command": "/bin/sh", "args": []any{"-c",
				`echo "ip=$NOMAD_IP_http addr=$NOMAD_ADDR_http"; mkdir -p /www && echo private > /www/index.html && exec httpd -f -p 8080 -h /www`}},
			Resources: &structs.Resources{CPU: 100, MemoryMB: 64}}},
	}}}
	if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job}, &structs.JobRegisterResponse{}); err != nil {
		t.Fatal(err)
	}
	var alloc *structs.Allocation
	wait.For(t, 60*time.Second, func() (bool, string) {
		alloc = onlyAlloc(t, s, job.ID)
		if alloc == nil {
			return false, "no alloc"
		}
		return alloc.ClientStatus == structs.AllocClientStatusRunning, "alloc " + alloc.ClientStatus
	})
	port, ok := alloc.AllocatedResources.Shared.Ports.Get("http")
	if !ok || port.HostIP != ip {
		t.Fatalf("port http = %+v, want host IP %s", port, ip)
	}
	addr := net.JoinHostPort(ip, strconv.Itoa(port.Value))

	var body string
	wait.For(t, 30*time.Second, func() (bool, string) {
		resp, err := (&http.Client{Timeout: 2 * time.Second}).Get("http://" + addr + "/")
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return resp.StatusCode == 200, "status " + resp.Status
	})
	if body != "private\n" {
		t.Fatalf("body %q", body)
	}
	// The same port on the node's default address is not published.
	if conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port.Value)), 2*time.Second); err == nil {
		conn.Close()
		t.Fatalf("port %d is reachable on 127.0.0.1 too; it must be bound on %s only", port.Value, ip)
	}
	rc, err := c.AllocLogs(alloc.ID, "web", "stdout", "start", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	logs, _ := io.ReadAll(rc)
	if want := fmt.Sprintf("ip=%s addr=%s", ip, addr); !strings.Contains(string(logs), want) {
		t.Fatalf("task env: got %q, want %q", logs, want)
	}

	if err := s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: job.ID}, &structs.JobDeregisterResponse{}); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 30*time.Second, func() (bool, string) {
		a := onlyAlloc(t, s, job.ID)
		return a != nil && a.ClientTerminalStatus(), "alloc still running"
	})
}
