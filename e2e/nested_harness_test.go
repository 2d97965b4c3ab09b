//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/helper/testutil/wait"
)

// Nested agents: an outer Drover cluster (a server and one client with
// raw_exec, real processes started by the test) runs inner Drover client
// agents as raw_exec jobs. Each inner agent joins the same servers in a
// datacenter of its own, so the work under test lands only on inner agents,
// and the test causes disconnects through Drover itself: `alloc signal -s
// SIGSTOP` on the inner agent's alloc freezes the agent (its tasks run in
// process groups of their own and keep running), `alloc restart` restarts
// it, stopping its job shuts it down, and killing its process lets the
// outer restart policy bring it back.

// nestedCluster is the outer cluster.
type nestedCluster struct {
	t      *testing.T
	server *agent
	outer  *agent
	// agents marks the inner agent processes: argv[0] is
	// "<agents>-<inner node name>".
	agents taskMarker
	dir    string
	// dc is the inner agents' datacenter, named after the test, so only
	// the work under test can land on them.
	dc string
}

// startNestedCluster starts the outer server and client. At cleanup it
// stops the outer client first (so nothing restarts an inner agent), then
// kills every inner agent, before the outer agents' data dirs go away.
func startNestedCluster(t *testing.T) *nestedCluster {
	t.Helper()
	c := &nestedCluster{t: t, agents: newTaskMarker(t), dir: t.TempDir(), dc: strings.ToLower(t.Name())}
	c.server = startServer(t, "server")
	c.outer = startClient(t, "outer", c.server)
	waitForReadyNodes(t, c.server, "outer")
	t.Cleanup(func() {
		c.outer.stop()
		killMarked(t, c.agents)
	})
	return c
}

// killMarked kills every process carrying the marker and waits until they
// are gone.
func killMarked(t *testing.T, m taskMarker) {
	t.Helper()
	for _, pid := range m.procs() {
		syscall.Kill(-pid, syscall.SIGKILL)
		syscall.Kill(pid, syscall.SIGKILL)
	}
	wait.Holds(10*time.Second, func() bool { return len(m.procs()) == 0 }, wait.Every(20*time.Millisecond))
}

// innerSpec says how to run one inner agent.
type innerSpec struct {
	name string // node name; the outer job is "inner-<name>"
	// keepState puts the data dir in the test's directory, where it
	// outlives the outer alloc (so a stopped and re-run inner job is the
	// same node). Otherwise it is inside the outer alloc dir, which only an
	// in-place restart keeps.
	keepState bool
	// restartDelay is the outer restart policy's delay (default 1s).
	restartDelay time.Duration
}

// innerAgent is an inner client agent run by the outer cluster.
type innerAgent struct {
	c      *nestedCluster
	spec   innerSpec
	jobID  string
	config string
}

// startInner writes the inner agent's config, registers its job on the
// outer cluster and waits until its node is ready.
func (c *nestedCluster) startInner(spec innerSpec) *innerAgent {
	c.t.Helper()
	if spec.restartDelay == 0 {
		spec.restartDelay = time.Second
	}
	ia := &innerAgent{c: c, spec: spec, jobID: "inner-" + spec.name}
	ia.config = filepath.Join(c.dir, spec.name+".hcl")
	body := fmt.Sprintf(`
name       = %q
datacenter = %q
bind_addr  = "127.0.0.1"
log_level  = "DEBUG"
ports {
  http = %d
  rpc  = %d
}
client {
  enabled           = true
  servers           = [%q]
  cpu_total_compute = 2000
  memory_total_mb   = 1024
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
`, spec.name, c.dc, freePort(c.t), freePort(c.t), c.server.rpcAddr())
	if err := os.WriteFile(ia.config, []byte(body), 0o600); err != nil {
		c.t.Fatal(err)
	}
	ia.run()
	return ia
}

// jobHCL is the outer job that runs the inner agent. bash writes its pid
// into the alloc dir (alloc/agent.pid, readable through `alloc fs`) and
// execs the agent under the marker, so that pid is the agent's.
func (ia *innerAgent) jobHCL() string {
	dataDir := `$NOMAD_ALLOC_DIR/data`
	if ia.spec.keepState {
		// Under the cluster's dir, which is removed only after every inner
		// agent has been killed.
		dataDir = filepath.Join(ia.c.dir, ia.spec.name+"-data")
	}
	return fmt.Sprintf(`
job %q {
  datacenters = ["dc1"]
  type        = "service"
  group "agent" {
    count = 1
    restart {
      attempts = 20
      interval = "10m"
      delay    = %q
      mode     = "delay"
    }
    task "agent" {
      driver       = "raw_exec"
      kill_timeout = "10s"
      config {
        command = "/bin/bash"
        args    = ["-c", "echo $$ > $NOMAD_ALLOC_DIR/agent.pid; exec -a %s-%s %s agent -config %s -data-dir %s"]
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`, ia.jobID, ia.spec.restartDelay.String(), ia.c.agents, ia.spec.name, binary(ia.c.t), ia.config, dataDir)
}

// run registers the inner agent's job and waits for its node to be ready.
func (ia *innerAgent) run() {
	ia.c.t.Helper()
	registerJob(ia.c.t, ia.c.server, ia.jobHCL(), 10*time.Second)
	ia.waitReady(30 * time.Second)
}

// waitReady waits until the inner agent's process runs and its node is
// ready.
func (ia *innerAgent) waitReady(timeout time.Duration) {
	ia.c.t.Helper()
	waitFor(ia.c.t, timeout, func() (bool, string) {
		if ia.pid() == 0 {
			return false, "no inner agent process " + ia.spec.name
		}
		n := ia.node()
		if n == nil || n.Status != "ready" {
			return false, fmt.Sprintf("inner node %s is %v", ia.spec.name, describeNode(n))
		}
		return true, ""
	})
}

// node returns the newest node registered under the inner agent's name.
func (ia *innerAgent) node() *api.NodeListStub {
	nodes, _, err := ia.c.server.api().Nodes().List(nil)
	if err != nil {
		return nil
	}
	var found *api.NodeListStub
	for _, n := range nodes {
		if n.Name == ia.spec.name && (found == nil || n.CreateIndex > found.CreateIndex) {
			found = n
		}
	}
	return found
}

func describeNode(n *api.NodeListStub) string {
	if n == nil {
		return "absent"
	}
	return n.ID[:8] + " " + n.Status
}

// nodeID is the inner agent's node ID as the servers know it.
func (ia *innerAgent) nodeID() string {
	ia.c.t.Helper()
	n := ia.node()
	if n == nil {
		ia.c.t.Fatalf("inner node %s is not registered", ia.spec.name)
	}
	return n.ID
}

// status is the inner agent's node status ("absent" before it registers).
func (ia *innerAgent) status() string {
	if n := ia.node(); n != nil {
		return n.Status
	}
	return "absent"
}

// pid is the inner agent's process, found by its marker (0 if none).
func (ia *innerAgent) pid() int { return ia.c.agents.procs()[ia.spec.name] }

// pidFromAlloc reads the inner agent's pid through the outer alloc's
// directory (`alloc fs <alloc> alloc/agent.pid`), as an operator would.
func (ia *innerAgent) pidFromAlloc() int {
	ia.c.t.Helper()
	id := ia.alloc().ID
	out, code := ia.c.server.cli("alloc", "fs", id, "alloc/agent.pid")
	if code != 0 {
		ia.c.t.Fatalf("alloc fs %s alloc/agent.pid: exit %d: %s", id[:8], code, out)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		ia.c.t.Fatalf("alloc/agent.pid of %s holds %q, not a pid", id[:8], out)
	}
	return pid
}

// alloc is the outer alloc that runs the inner agent now.
func (ia *innerAgent) alloc() *api.Allocation {
	ia.c.t.Helper()
	var alloc *api.Allocation
	waitFor(ia.c.t, 20*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(ia.c.server, ia.jobID)
		if err != nil {
			return false, err.Error()
		}
		for _, a := range allocs {
			if a.DesiredStatus == "run" && a.ClientStatus == "running" {
				alloc = a
				return true, ""
			}
		}
		return false, describeAllocs(allocs)
	})
	return alloc
}

// signal sends sig to the inner agent through `drover alloc signal`.
func (ia *innerAgent) signal(sig string) {
	ia.c.t.Helper()
	if out, code := ia.c.server.cli("alloc", "signal", "-s", sig, ia.alloc().ID); code != 0 {
		ia.c.t.Fatalf("alloc signal -s %s %s: exit %d: %s", sig, ia.spec.name, code, out)
	}
}

// freeze stops the inner agent with SIGSTOP through `alloc signal` and
// returns the thaw (SIGCONT through `alloc signal`). At cleanup the agent
// is thawed in case the test did not get that far.
func (ia *innerAgent) freeze() (thaw func()) {
	ia.c.t.Helper()
	ia.signal("SIGSTOP")
	pid := ia.pid()
	waitFor(ia.c.t, 5*time.Second, func() (bool, string) {
		st := procState(pid)
		return st == 'T', fmt.Sprintf("inner agent %s (pid %d) is in state %q", ia.spec.name, pid, st)
	})
	frozen := true
	ia.c.t.Cleanup(func() {
		if frozen {
			syscall.Kill(pid, syscall.SIGCONT)
		}
	})
	return func() {
		ia.c.t.Helper()
		if frozen {
			frozen = false
			ia.signal("SIGCONT")
		}
	}
}

// procState is the state letter of /proc/<pid>/stat (0 if unreadable).
func procState(pid int) byte {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 || i+2 >= len(stat) {
		return 0
	}
	return stat[i+2]
}

// logs returns the inner agent's stderr from the outer alloc's logs, for
// failure messages.
func (ia *innerAgent) logs() string {
	allocs, err := jobAllocs(ia.c.server, ia.jobID)
	if err != nil || len(allocs) == 0 {
		return fmt.Sprintf("no outer alloc: %v", err)
	}
	id := allocs[len(allocs)-1].ID
	stdout, _ := ia.c.server.cli("alloc", "logs", id, "agent")
	stderr, _ := ia.c.server.cli("alloc", "logs", "-stderr", id, "agent")
	return stdout + stderr
}

// dumpOnFailure logs the inner agents' own logs if the test failed.
func dumpOnFailure(t *testing.T, inner ...*innerAgent) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, ia := range inner {
			t.Logf("inner agent %s log (tail):\n%s", ia.spec.name, tail(ia.logs(), 60))
		}
	})
}

func tail(s string, lines int) string {
	l := strings.Split(s, "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}
