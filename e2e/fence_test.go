//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"
)

// disconnect.stop_on_client_after: a client that cannot reach any server
// stops the group's allocs itself once that long has passed, so a
// partitioned node never keeps running work the servers will replace.
//
// Here the partition (the only server hangs) ends before the servers'
// heartbeat TTL runs out, so they never saw the node go down: the alloc
// the client fenced comes back to them as complete while they still want
// it running. A service job must then get a replacement; exactly one alloc
// runs once things settle (promise 4).
func TestFencedAllocIsReplacedAfterTheServersReturn(t *testing.T) {
	m := newTaskMarker(t)
	// Heartbeats every 4-5s; the node would go down only 20s after its
	// last one. stop_on_client_after (6s) sits in between.
	s := startServerWith(t, "server", `
  min_heartbeat_ttl = "10s"
  heartbeat_grace   = "10s"
`)
	startClient(t, "c1", s)
	waitForReadyNodes(t, s, "c1")
	registerJob(t, s, serviceJob("fenced", m, `
    disconnect {
      stop_on_client_after = "6s"
    }`), 10*time.Second)
	orig, pid := waitForFirstAlloc(t, s, "fenced", m)

	frozenAt := time.Now()
	thaw := s.freeze()
	waitFor(t, 15*time.Second, func() (bool, string) {
		return m.procs()[orig.ID] == 0, fmt.Sprintf("task (pid %d) still runs with the servers unreachable", pid)
	})
	// The client's clock starts at its last acknowledged heartbeat, up to
	// 5s before the freeze.
	t.Logf("client stopped its task %s after losing the server (stop_on_client_after 6s)", time.Since(frozenAt))
	thaw()

	check := func() (bool, string) {
		allocs, err := jobAllocs(s, "fenced")
		if err != nil {
			return false, err.Error()
		}
		for _, a := range allocs {
			if a.ID == orig.ID && !a.ClientTerminalStatus() {
				return false, "the fenced alloc is " + a.ClientStatus
			}
		}
		running, procs := runningAllocs(allocs), m.procs()
		if len(running) != 1 || len(procs) != 1 || procs[running[0].ID] == 0 {
			return false, fmt.Sprintf("want one alloc running: %s, processes %v; evals %s", describeAllocs(allocs), procs, describeEvals(s, "fenced"))
		}
		return true, ""
	}
	waitFor(t, 30*time.Second, check)
	waitForEvalsDone(t, s, "fenced")
	if ok, why := check(); !ok {
		t.Fatalf("after every eval finished: %s", why)
	}
	if st := nodeStatus(s, "c1"); st != "ready" {
		t.Fatalf("node is %s", st)
	}
}
