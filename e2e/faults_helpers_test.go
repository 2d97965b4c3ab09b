//go:build e2e

package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/helper/testutil/wait"
)

// Helpers for the fault tests: a server whose heartbeats expire within
// seconds, client-only agents, frozen processes, and task processes found
// by a marker in their command line.

// fastHeartbeats makes a missed heartbeat count within about two seconds.
const fastHeartbeats = `
  min_heartbeat_ttl      = "1s"
  heartbeat_grace        = "1s"
  failover_heartbeat_ttl = "2s"
`

// startServer starts a single server agent with fast heartbeat expiry.
func startServer(t *testing.T, name string) *agent {
	t.Helper()
	return startServerWith(t, name, fastHeartbeats)
}

// startServerWith starts a single server agent with the given heartbeat
// settings (server block attributes).
func startServerWith(t *testing.T, name, heartbeats string) *agent {
	t.Helper()
	s := newAgent(t, agentSpec{name: name, extra: `
server {
  enabled          = true
  bootstrap_expect = 1
` + heartbeats + `
}`})
	waitForAgreedLeader(t, []*agent{s}, 30*time.Second, "")
	return s
}

// startClient starts a client-only agent that talks to servers, with
// raw_exec and the mock driver enabled.
func startClient(t *testing.T, name string, servers ...*agent) *agent {
	t.Helper()
	var addrs []string
	for _, s := range servers {
		addrs = append(addrs, strconv.Quote(s.rpcAddr()))
	}
	return newAgent(t, agentSpec{name: name, extra: clientConfig(addrs)})
}

// clientConfig is a client agent's configuration with the given quoted
// server addresses: fixed resources, raw_exec and the mock driver.
func clientConfig(quotedServers []string) string {
	return fmt.Sprintf(`
client {
  enabled           = true
  servers           = [%s]
  cpu_total_compute = 4000
  memory_total_mb   = 4096
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
plugin "mock_driver" {
  config {}
}
`, strings.Join(quotedServers, ", "))
}

// waitForReadyNodes waits until the server lists exactly the named nodes,
// all ready.
func waitForReadyNodes(t *testing.T, s *agent, names ...string) {
	t.Helper()
	waitFor(t, 30*time.Second, func() (bool, string) {
		nodes, _, err := s.api().Nodes().List(nil)
		if err != nil {
			return false, err.Error()
		}
		ready := map[string]bool{}
		for _, n := range nodes {
			ready[n.Name] = n.Status == "ready"
		}
		for _, name := range names {
			if !ready[name] {
				return false, fmt.Sprintf("node %s not ready in %v", name, describeNodes(nodes))
			}
		}
		return len(nodes) == len(names), fmt.Sprintf("nodes %v", describeNodes(nodes))
	})
}

func describeNodes(nodes []*api.NodeListStub) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name+"="+n.Status)
	}
	return out
}

// nodeStatus returns the status of the node called name, as s sees it.
func nodeStatus(s *agent, name string) string {
	nodes, _, err := s.api().Nodes().List(nil)
	if err != nil {
		return "error: " + err.Error()
	}
	for _, n := range nodes {
		if n.Name == name {
			return n.Status
		}
	}
	return "absent"
}

// registerJob parses jobHCL through the server and registers it. Errors
// are retried until timeout (a cluster may be between leaders).
func registerJob(t *testing.T, s *agent, jobHCL string, timeout time.Duration) *api.Job {
	t.Helper()
	var job *api.Job
	waitFor(t, timeout, func() (bool, string) {
		var err error
		job, err = s.api().Jobs().ParseHCL(jobHCL, true)
		if err != nil {
			return false, "parse: " + err.Error()
		}
		if _, _, err = s.api().Jobs().Register(job, nil); err != nil {
			return false, "register: " + err.Error()
		}
		return true, ""
	})
	return job
}

// jobAllocs returns every alloc of the job with its full record, oldest
// first.
func jobAllocs(s *agent, jobID string) ([]*api.Allocation, error) {
	stubs, _, err := s.api().Jobs().Allocations(jobID, true, nil)
	if err != nil {
		return nil, err
	}
	out := make([]*api.Allocation, 0, len(stubs))
	for _, st := range stubs {
		a, _, err := s.api().Allocations().Info(st.ID, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreateIndex < out[j].CreateIndex })
	return out, nil
}

func describeAllocs(allocs []*api.Allocation) string {
	var b strings.Builder
	for _, a := range allocs {
		fmt.Fprintf(&b, "[%s %s on %s desired=%s client=%s", a.ID[:8], a.Name, a.NodeName, a.DesiredStatus, a.ClientStatus)
		if a.DesiredDescription != "" {
			fmt.Fprintf(&b, " (%s)", a.DesiredDescription)
		}
		b.WriteString("]")
	}
	return b.String()
}

// describeEvals lists the job's evaluations in raft order, for failure
// messages that need to say which evaluation did what.
func describeEvals(s *agent, jobID string) string {
	evals, _, err := s.api().Jobs().Evaluations(jobID, nil)
	if err != nil {
		return err.Error()
	}
	sort.Slice(evals, func(i, j int) bool { return evals[i].CreateIndex < evals[j].CreateIndex })
	var b strings.Builder
	for _, e := range evals {
		fmt.Fprintf(&b, "[%s %s %s created@%d modified@%d]", e.ID[:8], e.TriggeredBy, e.Status, e.CreateIndex, e.ModifyIndex)
	}
	return b.String()
}

// runningAllocs returns the allocs the servers want running whose client
// reports them running.
func runningAllocs(allocs []*api.Allocation) []*api.Allocation {
	var out []*api.Allocation
	for _, a := range allocs {
		if a.DesiredStatus == "run" && a.ClientStatus == "running" {
			out = append(out, a)
		}
	}
	return out
}

// waitForStable waits until cond has held continuously for window: the
// state has settled, not just passed through the wanted shape.
func waitForStable(t *testing.T, timeout, window time.Duration, cond func() (bool, string)) {
	t.Helper()
	var since time.Time
	waitFor(t, timeout, func() (bool, string) {
		ok, why := cond()
		switch {
		case !ok:
			since = time.Time{}
			return false, why
		case since.IsZero():
			since = time.Now()
		}
		return time.Since(since) >= window, fmt.Sprintf("held for %s of %s", time.Since(since).Round(time.Millisecond), window)
	})
}

// waitForEvalsDone waits until every evaluation of the job is terminal, so
// the scheduler has acted on everything it was told. Delayed evaluations
// (a disconnect's lost_after follow-up, say) are not due and do not count.
func waitForEvalsDone(t *testing.T, s *agent, jobID string) {
	t.Helper()
	waitFor(t, 30*time.Second, func() (bool, string) {
		evals, _, err := s.api().Jobs().Evaluations(jobID, nil)
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evals {
			if e.TerminalStatus() || (e.Status == "pending" && e.WaitUntil.After(time.Now())) {
				continue
			}
			return false, fmt.Sprintf("eval %s (%s) is %s", e.ID[:8], e.TriggeredBy, e.Status)
		}
		return true, ""
	})
}

// freeze stops every process of the agent with SIGSTOP, as if the machine
// hung or its network vanished. Its tasks run in their own process groups
// and keep running. The returned thaw resumes it; it is also called at
// cleanup so that the agent can be stopped.
func (a *agent) freeze() (thaw func()) {
	a.t.Helper()
	pid := a.cmd.Process.Pid
	if err := syscall.Kill(-pid, syscall.SIGSTOP); err != nil {
		a.t.Fatalf("SIGSTOP %s: %v", a.name, err)
	}
	frozen := true
	thaw = func() {
		if frozen {
			frozen = false
			syscall.Kill(-pid, syscall.SIGCONT)
		}
	}
	a.t.Cleanup(thaw)
	return thaw
}

// taskMarker names the processes of one test's raw_exec tasks: a task
// started with markedSleep runs `sleep` with argv[0] "<marker>-<alloc ID>".
type taskMarker string

// newTaskMarker returns a fresh marker and makes sure, at cleanup (after
// the agents stopped), that no process carrying it survives the test.
func newTaskMarker(t *testing.T) taskMarker {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	m := taskMarker("drover-e2e-task-" + hex.EncodeToString(b))
	t.Cleanup(func() {
		for _, pid := range m.procs() {
			syscall.Kill(-pid, syscall.SIGKILL)
			syscall.Kill(pid, syscall.SIGKILL)
		}
		wait.Holds(5*time.Second, func() bool { return len(m.procs()) == 0 }, wait.Every(20*time.Millisecond))
		if left := m.procs(); len(left) > 0 {
			t.Errorf("task processes %v of %s survived the test", left, m)
		}
	})
	return m
}

// command is the raw_exec config that runs sleep under the marker. bash
// expands the alloc ID from the task's environment and execs, so the pid
// the driver started is the sleeping process.
func (m taskMarker) command() string {
	return fmt.Sprintf(`
      driver = "raw_exec"
      config {
        command = "/bin/bash"
        args    = ["-c", "exec -a %s-$NOMAD_ALLOC_ID sleep 3600"]
      }`, m)
}

// procs maps alloc ID to the pid of the live process carrying the marker.
func (m taskMarker) procs() map[string]int {
	out := map[string]int{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	prefix := []byte(string(m) + "-")
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !bytes.HasPrefix(cmdline, prefix) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join(d, "stat")); err == nil && isZombie(stat) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		argv0, _, _ := bytes.Cut(cmdline, []byte{0})
		out[string(argv0[len(prefix):])] = pid
	}
	return out
}

// isZombie reads the state field of /proc/<pid>/stat.
func isZombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}

// waitForAwayAndReplaced waits until the node of orig, as nodeIs tells it,
// is nodeWant ("disconnected", "down"), orig's client status is origWant
// ("unknown", "lost"), and another alloc of jobID on another node runs with
// a live task process; it returns that replacement.
func waitForAwayAndReplaced(t *testing.T, s *agent, jobID string, orig *api.Allocation, m taskMarker, timeout time.Duration,
	nodeIs func() string, nodeWant, origWant string) *api.Allocation {
	t.Helper()
	var repl *api.Allocation
	waitFor(t, timeout, func() (bool, string) {
		if st := nodeIs(); st != nodeWant {
			return false, "the original's node is " + st
		}
		allocs, err := jobAllocs(s, jobID)
		if err != nil {
			return false, err.Error()
		}
		repl = nil
		for _, a := range allocs {
			if a.ID == orig.ID && a.ClientStatus != origWant {
				return false, "original is " + a.ClientStatus
			}
			if a.ID != orig.ID && a.NodeName != orig.NodeName && a.DesiredStatus == "run" && a.ClientStatus == "running" {
				repl = a
			}
		}
		return repl != nil && m.procs()[repl.ID] != 0, "no running replacement: " + describeAllocs(allocs)
	})
	return repl
}

// stopAtCleanup stops the jobs at the end of the test and waits until
// none of their tasks runs, before the agent stops: an agent leaves its
// tasks running when it stops (a restarted client re-attaches to them).
// For tests whose tasks carry no taskMarker.
func stopAtCleanup(t *testing.T, a *agent, jobIDs ...string) {
	t.Helper()
	t.Cleanup(func() {
		for _, id := range jobIDs {
			_, _, _ = a.api().Jobs().Deregister(id, false, nil)
		}
		wait.Holds(30*time.Second, func() bool {
			for _, id := range jobIDs {
				allocs, err := jobAllocs(a, id)
				if err != nil {
					return false
				}
				for _, al := range allocs {
					if al.ClientStatus == "running" || al.ClientStatus == "pending" {
						return false
					}
				}
			}
			return true
		}, wait.Every(100*time.Millisecond))
	})
}
