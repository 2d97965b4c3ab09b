//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// refusalLine is what a server logs when it refuses a node's alloc report
// because the node has not heartbeated since it was marked down or
// disconnected (nomad.Node.UpdateAlloc).
const refusalLine = "refused alloc update from a node that has not heartbeated"

// fenceLine is what a client logs when it stops an alloc itself under
// disconnect.stop_on_client_after.
const fenceLine = "stopping alloc: no contact with servers for longer than stop_on_client_after"

// pinnedServiceJob is serviceJob held to one node by name.
func pinnedServiceJob(id string, m taskMarker, group, node string) string {
	return strings.Replace(serviceJob(id, m, group), `type        = "service"`, fmt.Sprintf(`type        = "service"
  constraint {
    attribute = "${node.unique.name}"
    value     = %q
  }`, node), 1)
}

// keptWithRestarts keeps the original on reconnect and restarts a task
// that dies after a second.
const keptWithRestarts = keepOriginalFor5m + `
    restart {
      attempts = 3
      interval = "5m"
      delay    = "1s"
      mode     = "fail"
    }`

// Two clients cut from every server while they and their tasks keep
// running. Their heartbeats fail; the servers mark them not ready.
//
// On cA runs "kept" (lost_after, keep_original): it is replaced on the
// spare client and its original keeps running. On cB runs "fenced"
// (stop_on_client_after), pinned there: the live client stops it itself.
//
// Then the report-before-heartbeat race of seed 004, made to happen
// rather than left to chance: cA's link is healed at a moment its log
// shows its next heartbeat is seconds away (its failed calls back off),
// and the test kills the kept task at once, so cA reports a task change
// straight away. The server refuses that report (logged, with the node
// ID), the heartbeat makes the node ready, the report sent again is
// accepted: the kept original runs with AllocStates [unknown, running],
// its replacement is stopped and its process gone. After cB heals,
// "fenced" runs anew there, once.
func TestNetnsClientCutFromAllServers(t *testing.T) {
	elapsed(t)
	m := newTaskMarker(t)
	c := startNetnsCluster(t, netnsClusterSpec{servers: 1, clients: []string{"c1", "c2", "cB"}})
	s := c.servers[0]
	kept := strings.Replace(serviceJob("kept", m, keptWithRestarts), `type        = "service"`, `type        = "service"
  constraint {
    attribute = "${node.unique.name}"
    operator  = "!="
    value     = "cB"
  }`, 1)
	registerJob(t, s, kept, 10*time.Second)
	orig, origPid := waitForFirstAlloc(t, s, "kept", m)
	registerJob(t, s, pinnedServiceJob("fenced", m, `
    disconnect {
      stop_on_client_after = "3s"
    }`, "cB"), 10*time.Second)
	fenced, _ := waitForFirstAlloc(t, s, "fenced", m)
	// cA is wherever "kept" landed (never cB); the other is the spare.
	cA := orig.NodeName
	a, b := c.nodes[cA], c.nodes["cB"]
	aID := nodeByName(t, s, cA).ID
	a.fastTCPGiveUp()

	cutAt := time.Now()
	a.cut()
	b.cut()
	var repl *api.Allocation
	waitFor(t, 30*time.Second, func() (bool, string) {
		if st := nodeStatus(s, cA); st != "disconnected" {
			return false, cA + " is " + st
		}
		if st := nodeStatus(s, "cB"); st != "down" {
			return false, "cB is " + st
		}
		allocs, err := jobAllocs(s, "kept")
		if err != nil {
			return false, err.Error()
		}
		repl = nil
		for _, x := range allocs {
			if x.ID == orig.ID && x.ClientStatus != "unknown" {
				return false, "original is " + x.ClientStatus
			}
			if x.ID != orig.ID && x.DesiredStatus == "run" && x.ClientStatus == "running" {
				repl = x
			}
		}
		if repl == nil || m.procs()[repl.ID] == 0 {
			return false, "no running replacement: " + describeAllocs(allocs)
		}
		return m.procs()[fenced.ID] == 0, "the fenced alloc's task still runs on the cut client"
	})
	t.Logf("disconnected, replaced and fenced %s after the cut", time.Since(cutAt).Round(time.Millisecond))
	for _, name := range []string{cA, "cB"} {
		select {
		case err := <-c.clients[name].done:
			t.Fatalf("the cut client %s exited (%v): a partition must leave it running", name, err)
		default:
		}
	}
	if b.countLog(fenceLine) == 0 {
		t.Fatalf("cB's log does not say it stopped the fenced alloc itself (%q)", fenceLine)
	}
	if m.procs()[orig.ID] != origPid {
		t.Fatalf("cA's kept task (pid %d) must keep running through the cut: %v", origPid, m.procs())
	}

	// Heal cA when its next heartbeat is at least 2.5s away, then make it
	// report at once.
	var wait time.Duration
	waitFor(t, 60*time.Second, func() (bool, string) {
		wait = nextHeartbeatIn(a.log.String())
		return wait >= 2500*time.Millisecond, fmt.Sprintf("cA's next heartbeat is %s away", wait)
	})
	serverLog := c.nodes["s1"]
	refusedBefore := countRefusals(serverLog.log.String(), aID)
	healAt := time.Now()
	a.heal()
	if err := syscall.Kill(origPid, syscall.SIGKILL); err != nil {
		t.Fatalf("killing the kept task: %v", err)
	}
	t.Logf("healed %s %s before its next heartbeat and killed its kept task", cA, wait.Round(time.Millisecond))
	waitFor(t, 30*time.Second, func() (bool, string) {
		n := countRefusals(serverLog.log.String(), aID) - refusedBefore
		return n > 0, fmt.Sprintf("no report from %s refused yet; it is %s", cA, nodeStatus(s, cA))
	})
	t.Logf("the server refused %s's report %s after the heal (before its heartbeat)", cA, time.Since(healAt).Round(time.Millisecond))
	waitFor(t, 60*time.Second, func() (bool, string) {
		if st := nodeStatus(s, cA); st != "ready" {
			return false, cA + " is " + st
		}
		allocs, err := jobAllocs(s, "kept")
		if err != nil {
			return false, err.Error()
		}
		r := runningAllocs(allocs)
		if len(r) != 1 || r[0].ID != orig.ID || m.procs()[repl.ID] != 0 || m.procs()[orig.ID] == 0 {
			return false, fmt.Sprintf("kept: %s, processes %v", describeAllocs(allocs), m.procs())
		}
		return true, ""
	})
	t.Logf("kept settled %s after the heal", time.Since(healAt).Round(time.Millisecond))
	x, _, err := s.api().Allocations().Info(orig.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	assertUnknownThenRunning(t, x)

	healAt = time.Now()
	b.heal()
	waitFor(t, 60*time.Second, func() (bool, string) {
		if st := nodeStatus(s, "cB"); st != "ready" {
			return false, "cB is " + st
		}
		allocs, err := jobAllocs(s, "fenced")
		if err != nil {
			return false, err.Error()
		}
		r := runningAllocs(allocs)
		return len(r) == 1 && r[0].ID != fenced.ID && m.procs()[r[0].ID] != 0, "fenced: " + describeAllocs(allocs)
	})
	t.Logf("fenced runs anew %s after cB healed", time.Since(healAt).Round(time.Millisecond))
	waitForEvalsDone(t, s, "kept")
	waitForEvalsDone(t, s, "fenced")
	if procs := m.procs(); len(procs) != 2 || procs[orig.ID] == 0 {
		t.Fatalf("want the kept original's and the new fenced alloc's processes only: %v", procs)
	}
	for _, job := range []string{"kept", "fenced"} {
		allocs, _ := jobAllocs(s, job)
		if r := runningAllocs(allocs); len(r) != 1 {
			t.Fatalf("%s: want exactly one running alloc after every eval: %s", job, describeAllocs(allocs))
		}
	}
}

// heartbeatFailure matches a client's log line for a failed heartbeat
// (or registration) and the backoff before its next attempt.
var heartbeatFailure = regexp.MustCompile(`(?m)^(\S+) \[WARN\]\s+agent\.client: failed to contact servers:[^\n]*?retry_in=([0-9.]+[a-zµ]+)`)

// nextHeartbeatIn reads a client log and says how long until its next
// heartbeat attempt, by its last failure's time and backoff; zero when
// that moment has passed or there was no failure.
func nextHeartbeatIn(log string) time.Duration {
	all := heartbeatFailure.FindAllStringSubmatch(log, -1)
	if len(all) == 0 {
		return 0
	}
	last := all[len(all)-1]
	at, err := time.Parse("2006-01-02T15:04:05.000Z0700", last[1])
	if err != nil {
		return 0
	}
	wait, err := time.ParseDuration(last[2])
	if err != nil {
		return 0
	}
	return time.Until(at.Add(wait))
}

// countRefusals counts a server log's refusals of the node's reports.
func countRefusals(log, nodeID string) int {
	n := 0
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, refusalLine) && strings.Contains(line, nodeID) {
			n++
		}
	}
	return n
}
