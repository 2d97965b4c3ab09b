//go:build e2e

package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Real network partitions. Every agent of a netns test runs in a network
// namespace of its own, attached by a veth pair to a bridge that lives in
// a "hub" namespace; the test process reaches the bridge through one more
// veth pair, so it can talk to every agent's HTTP API. A partition is made
// while every process keeps running: a node's link is set down (cut from
// everyone, the test included), or a prohibit route is put in both of two
// nodes' namespaces (they cannot reach each other; everyone else still
// reaches both). This machine class has `ip` but neither iptables nor tc
// netem, so these two are the tools.
//
// Addresses come from 10.213.0.0/16, used only here: one /24 per test
// network, 10.213.X.1 the test process, agents from .2 up. Every name
// starts with netnsPrefix and carries the pid of the test process, so a
// later run can tell an aborted run's leftovers (its process is gone) from
// a concurrent run's live namespaces, and remove only the former.

const (
	netnsPrefix = "drover-e2e-"
	// netnsLock serialises choosing a subnet and cleaning leftovers
	// between concurrent test processes.
	netnsLock = "/run/drover-e2e-netns.lock"
	// The ports every namespaced agent uses: each has a namespace of its
	// own, so they never collide.
	netnsHTTPPort = 4646
	netnsRPCPort  = 4647
)

// netnsNet is one test's private network.
type netnsNet struct {
	t      *testing.T
	name   string // namespace name prefix: drover-e2e-<pid>-<id>
	subnet int    // X of 10.213.X.0/24
	hub    string // the namespace holding the bridge
	hostIf string // the test process's end of its link to the bridge

	mu    sync.Mutex
	nodes []*netnsNode
}

// netnsNode is one agent's namespace and its link to the bridge.
type netnsNode struct {
	net   *netnsNet
	name  string
	ns    string
	ip    string
	hubIf string // the bridge's end of the node's link, in the hub
	// log is the agent's output, readable while it runs (agent.log is
	// written by exec's copier and may only be read after the exit).
	log *lockedBuffer
}

// lockedBuffer is a bytes.Buffer safe for one writer and many readers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// requireNetns skips the test where network namespaces cannot be made.
// As root with `ip` present they must work, and a failure later is a
// failure of the test.
func requireNetns(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network partition tests need root to create network namespaces (ip netns add); CI runs them as root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("network partition tests need the `ip` command (iproute2) to create namespaces and links")
	}
}

// ipRun runs `ip args...` and fails the test if it fails.
func ipRun(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// newNetnsNet makes a fresh network for the test and removes it at
// cleanup, after the agents in it have stopped.
func newNetnsNet(t *testing.T) *netnsNet {
	t.Helper()
	requireNetns(t)
	b := make([]byte, 4)
	rand.Read(b)
	id := hex.EncodeToString(b)
	n := &netnsNet{t: t, name: fmt.Sprintf("%s%d-%s", netnsPrefix, os.Getpid(), id), hostIf: "drv" + id}
	n.hub = n.name + "-hub"

	unlock := lockNetns(t)
	cleanNetnsLeftovers(t)
	n.subnet = freeSubnet(t)
	// Registered first, so it runs after the agents' own cleanups.
	t.Cleanup(n.destroy)
	ipRun(t, "netns", "add", n.hub)
	ipRun(t, "-n", n.hub, "link", "add", "br0", "type", "bridge")
	ipRun(t, "-n", n.hub, "link", "set", "br0", "up")
	ipRun(t, "link", "add", n.hostIf, "type", "veth", "peer", "name", "up0", "netns", n.hub)
	ipRun(t, "-n", n.hub, "link", "set", "up0", "master", "br0", "up")
	ipRun(t, "addr", "add", fmt.Sprintf("10.213.%d.1/24", n.subnet), "dev", n.hostIf)
	ipRun(t, "link", "set", n.hostIf, "up")
	unlock()
	return n
}

// lockNetns takes the cross-process lock; the result releases it.
func lockNetns(t *testing.T) func() {
	t.Helper()
	f, err := os.OpenFile(netnsLock, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("opening %s: %v", netnsLock, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("locking %s: %v", netnsLock, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}

var netnsOwner = regexp.MustCompile(`^` + netnsPrefix + `(\d+)-`)

// cleanNetnsLeftovers removes the namespaces of test processes that no
// longer run (an aborted or killed run), with any process still inside
// them. Deleting a namespace deletes its veth ends, and with them their
// peers: the hub's removal takes the host link with it.
func cleanNetnsLeftovers(t *testing.T) {
	t.Helper()
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		m := netnsOwner.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		if testProcessAlive(pid) {
			continue
		}
		t.Logf("removing namespace %s left by an earlier run (pid %d is gone)", e.Name(), pid)
		removeNamespace(e.Name())
	}
}

// testProcessAlive reports whether pid is a running go test binary.
func testProcessAlive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	argv0, _, _ := bytes.Cut(cmdline, []byte{0})
	return strings.HasSuffix(string(argv0), ".test")
}

// removeNamespace kills every process in the namespace and deletes it.
func removeNamespace(ns string) {
	if out, err := exec.Command("ip", "netns", "pids", ns).Output(); err == nil {
		for _, f := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(f); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	exec.Command("ip", "netns", "del", ns).Run()
}

var subnetAddr = regexp.MustCompile(`inet 10\.213\.(\d+)\.`)

// freeSubnet picks a /24 of 10.213.0.0/16 that no host link uses.
func freeSubnet(t *testing.T) int {
	t.Helper()
	out, err := exec.Command("ip", "-4", "-o", "addr", "show").Output()
	if err != nil {
		t.Fatalf("ip addr show: %v", err)
	}
	used := map[int]bool{}
	for _, m := range subnetAddr.FindAllStringSubmatch(string(out), -1) {
		x, _ := strconv.Atoi(m[1])
		used[x] = true
	}
	for x := 1; x < 255; x++ {
		if !used[x] {
			return x
		}
	}
	t.Fatal("every /24 of 10.213.0.0/16 is in use by other test networks")
	return 0
}

// destroy removes the node namespaces and the hub (which takes the host
// link with it), killing whatever still runs inside.
func (n *netnsNet) destroy() {
	n.mu.Lock()
	nodes := n.nodes
	n.mu.Unlock()
	for _, node := range nodes {
		removeNamespace(node.ns)
	}
	removeNamespace(n.hub)
}

// addNode makes a namespace for one agent and links it to the bridge.
func (n *netnsNet) addNode(name string) *netnsNode {
	n.t.Helper()
	n.mu.Lock()
	idx := len(n.nodes) + 2
	node := &netnsNode{net: n, name: name, ns: n.name + "-" + name, hubIf: fmt.Sprintf("p%d", idx),
		ip: fmt.Sprintf("10.213.%d.%d", n.subnet, idx), log: &lockedBuffer{}}
	n.nodes = append(n.nodes, node)
	n.mu.Unlock()
	ipRun(n.t, "netns", "add", node.ns)
	ipRun(n.t, "-n", node.ns, "link", "set", "lo", "up")
	ipRun(n.t, "-n", n.hub, "link", "add", node.hubIf, "type", "veth", "peer", "name", "eth0", "netns", node.ns)
	ipRun(n.t, "-n", n.hub, "link", "set", node.hubIf, "master", "br0", "up")
	ipRun(n.t, "-n", node.ns, "addr", "add", node.ip+"/24", "dev", "eth0")
	ipRun(n.t, "-n", node.ns, "link", "set", "eth0", "up")
	return node
}

// startAgent runs `drover agent` inside the node's namespace, bound to
// the node's address; extra is the configuration beyond ports and data
// dir. The agent is stopped at cleanup like any other.
func (node *netnsNode) startAgent(extra string) *agent {
	node.net.t.Helper()
	return node.launchAgent(extra, "ip", "netns", "exec", node.ns)
}

// startAgentHostMounts is startAgent for an agent that needs the host's
// mounts: `ip netns exec` gives the agent a sysfs of the namespace's own,
// without /sys/fs/cgroup, so exec tasks could not be confined; nsenter
// changes the network namespace only.
func (node *netnsNode) startAgentHostMounts(extra string) *agent {
	node.net.t.Helper()
	return node.launchAgent(extra, "nsenter", "--net=/var/run/netns/"+node.ns, "--")
}

// launchAgent runs the agent under the launcher that enters the node's
// namespace and then execs the agent, so the pid is the agent's.
func (node *netnsNode) launchAgent(extra string, launcher ...string) *agent {
	t := node.net.t
	t.Helper()
	a := &agent{t: t, name: node.name, dir: t.TempDir(), httpPort: netnsHTTPPort, rpcPort: netnsRPCPort, host: node.ip}
	writeConfig(t, a, extra)
	a.log = &bytes.Buffer{}
	// The launcher enters the namespace and execs the agent: the pid is
	// the agent's, so signals and process groups work as usual.
	a.cmd = exec.Command(launcher[0], append(launcher[1:], binary(t), "agent", "-config", a.config)...)
	w := io.MultiWriter(a.log, node.log)
	a.cmd.Stdout, a.cmd.Stderr = w, w
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := a.cmd.Start(); err != nil {
		t.Fatalf("starting agent %s in %s: %v", node.name, node.ns, err)
	}
	a.done = make(chan error, 1)
	go func(cmd *exec.Cmd, done chan error) { done <- cmd.Wait() }(a.cmd, a.done)
	t.Cleanup(a.stop)
	return a
}

// cut takes the node's own end of its link down, as if its cable were
// pulled: it reaches no one and no one reaches it (the test process
// included), while its processes keep running. Its connected route goes
// with the link, so its new connections fail at once; established ones
// stall until TCP or yamux gives up on them.
func (node *netnsNode) cut() { ipRun(node.net.t, "-n", node.ns, "link", "set", "eth0", "down") }

// heal brings the node's link back up (and with it its route).
func (node *netnsNode) heal() { ipRun(node.net.t, "-n", node.ns, "link", "set", "eth0", "up") }

// fastTCPGiveUp makes established TCP connections in the node's namespace
// fail after three unanswered retransmissions (seconds) instead of the
// kernel's fifteen (about 15 minutes): a connection cut mid-call then
// errors, as it would once yamux's keepalive noticed, but sooner.
func (node *netnsNode) fastTCPGiveUp() {
	t := node.net.t
	t.Helper()
	cmd := exec.Command("ip", "netns", "exec", node.ns, "sh", "-c", "echo 3 > /proc/sys/net/ipv4/tcp_retries2")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("setting tcp_retries2 in %s: %v: %s", node.ns, err, out)
	}
}

// block makes a and b unreachable to each other (a prohibit route to the
// other in each namespace); both stay reachable to everyone else.
func block(t testing.TB, a, b *netnsNode) {
	t.Helper()
	ipRun(t, "-n", a.ns, "route", "add", "prohibit", b.ip+"/32")
	ipRun(t, "-n", b.ns, "route", "add", "prohibit", a.ip+"/32")
}

// unblock undoes block.
func unblock(t testing.TB, a, b *netnsNode) {
	t.Helper()
	ipRun(t, "-n", a.ns, "route", "del", "prohibit", b.ip+"/32")
	ipRun(t, "-n", b.ns, "route", "del", "prohibit", a.ip+"/32")
}

// netnsCluster is servers and clients, each in its own namespace.
type netnsCluster struct {
	net     *netnsNet
	servers []*agent
	nodes   map[string]*netnsNode // by agent name
	clients map[string]*agent
	// rpcAddrs are the servers' RPC addresses, quoted for HCL.
	rpcAddrs []string
}

// netnsClusterSpec says what to start. Heartbeats expire fast: a missed
// TTL counts within about two seconds.
type netnsClusterSpec struct {
	servers int
	clients []string
	// failoverTTL is the heartbeat TTL a new leader gives every node;
	// "" means 5s.
	failoverTTL string
}

func startNetnsCluster(t *testing.T, spec netnsClusterSpec) *netnsCluster {
	t.Helper()
	started := time.Now()
	n := newNetnsNet(t)
	c := &netnsCluster{net: n, nodes: map[string]*netnsNode{}, clients: map[string]*agent{}}
	failover := spec.failoverTTL
	if failover == "" {
		failover = "5s"
	}
	var serverNodes []*netnsNode
	for i := range spec.servers {
		serverNodes = append(serverNodes, n.addNode(fmt.Sprintf("s%d", i+1)))
	}
	var rpcAddrs []string
	for _, sn := range serverNodes {
		rpcAddrs = append(rpcAddrs, strconv.Quote(fmt.Sprintf("%s:%d", sn.ip, netnsRPCPort)))
	}
	for i, sn := range serverNodes {
		var join []string
		for j, a := range rpcAddrs {
			if j != i {
				join = append(join, a)
			}
		}
		joinBlock := ""
		if len(join) > 0 {
			joinBlock = fmt.Sprintf(`
  server_join {
    retry_join     = [%s]
    retry_interval = "200ms"
  }`, strings.Join(join, ", "))
		}
		s := sn.startAgent(fmt.Sprintf(`
server {
  enabled                = true
  bootstrap_expect       = %d
  min_heartbeat_ttl      = "1s"
  heartbeat_grace        = "1s"
  failover_heartbeat_ttl = %q%s
}`, spec.servers, failover, joinBlock))
		c.servers = append(c.servers, s)
		c.nodes[sn.name] = sn
	}
	waitForAgreedLeader(t, c.servers, 30*time.Second, "")
	c.rpcAddrs = rpcAddrs
	for _, name := range spec.clients {
		c.startClient(name)
	}
	if len(spec.clients) > 0 {
		waitForReadyNodes(t, c.servers[0], spec.clients...)
	}
	t.Logf("network %s (10.213.%d.0/24): %d servers, clients %v up in %s", n.name, n.subnet, spec.servers, spec.clients, time.Since(started).Round(time.Millisecond))
	return c
}

// startClient adds a client-only agent in a namespace of its own,
// pointed at every server, with raw_exec and the mock driver.
func (c *netnsCluster) startClient(name string) *agent {
	c.net.t.Helper()
	cn := c.net.addNode(name)
	c.nodes[name] = cn
	a := cn.startAgent(clientConfig(c.rpcAddrs))
	c.clients[name] = a
	return a
}

// leader returns the server that all servers agree leads, and the others.
// Only servers the test can reach may be passed.
func (c *netnsCluster) leader(t *testing.T, among []*agent, notLeader string) (*agent, []*agent) {
	t.Helper()
	addr := waitForAgreedLeader(t, among, 30*time.Second, notLeader)
	var leader *agent
	var rest []*agent
	for _, s := range c.servers {
		if s.rpcAddr() == addr {
			leader = s
		} else {
			rest = append(rest, s)
		}
	}
	if leader == nil {
		t.Fatalf("leader %s is none of the servers", addr)
	}
	return leader, rest
}

// countLog counts the lines of the node's agent log containing s.
func (node *netnsNode) countLog(s string) int {
	return strings.Count(node.log.String(), s)
}

// elapsed logs how long a scenario took, for the closing report.
func elapsed(t *testing.T) {
	start := time.Now()
	t.Cleanup(func() { t.Logf("scenario took %s", time.Since(start).Round(100*time.Millisecond)) })
}
