//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A server that hangs (SIGSTOP) for longer than the heartbeat TTL wakes up
// to overdue heartbeat timers for clients that did nothing wrong. Whatever
// it decides about them, the cluster must settle with exactly the job's
// count running, one task process per running alloc, and no node left
// down (promise 4).
func TestServerPauseLeavesNoDuplicates(t *testing.T) {
	m := newTaskMarker(t)
	c := startFaultCluster(t, "c1", "c2")
	s := c.server
	job := strings.Replace(serviceJob("paused", m, ""), "count = 1", "count = 2", 1)
	registerJob(t, s, job, 10*time.Second)
	waitFor(t, 30*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(s, "paused")
		if err != nil {
			return false, err.Error()
		}
		return len(runningAllocs(allocs)) == 2 && len(m.procs()) == 2, describeAllocs(allocs)
	})

	// The fault itself lasts four seconds: twice TTL plus grace.
	thaw := s.freeze()
	<-time.After(4 * time.Second)
	thawedAt := time.Now()
	thaw()

	check := func() (bool, string) {
		for _, n := range []string{"c1", "c2"} {
			if st := nodeStatus(s, n); st != "ready" {
				return false, n + " is " + st
			}
		}
		allocs, err := jobAllocs(s, "paused")
		if err != nil {
			return false, err.Error()
		}
		running := runningAllocs(allocs)
		procs := m.procs()
		if len(running) != 2 || len(procs) != 2 {
			return false, fmt.Sprintf("%s, processes %v", describeAllocs(allocs), procs)
		}
		for _, a := range running {
			if procs[a.ID] == 0 {
				return false, fmt.Sprintf("running alloc %s has no process (%v)", a.ID[:8], procs)
			}
		}
		return true, ""
	}
	// Right after the thaw the old state still holds until the overdue
	// timers fire; settled means holding for longer than TTL plus grace.
	waitForStable(t, 30*time.Second, 3*time.Second, check)
	waitForEvalsDone(t, s, "paused")
	if ok, why := check(); !ok {
		t.Fatalf("after every eval finished: %s", why)
	}
	allocs, _ := jobAllocs(s, "paused")
	lost := 0
	for _, a := range allocs {
		if a.ClientStatus == "lost" {
			lost++
		}
	}
	// Not a promise, but churn worth knowing about: allocs of healthy
	// clients declared lost because the server, not they, went silent.
	t.Logf("settled %s after the thaw; %d alloc(s) lost to the pause: %s", time.Since(thawedAt), lost, describeAllocs(allocs))
}
