//go:build e2e

package e2e

import (
	"testing"
	"time"
)

// The Go api client reads a running alloc's resource usage from the agent
// that runs it (GET /v1/client/allocation/:id/stats), in Nomad's shape:
// `drover alloc status -stats` depends on it.
func TestAllocStatsThroughTheAPI(t *testing.T) {
	m := newTaskMarker(t)
	c := startFaultCluster(t, "c1")
	registerJob(t, c.server, serviceJob("stats", m, ""), 10*time.Second)
	alloc, _ := waitForFirstAlloc(t, c.server, "stats", m)

	for _, a := range []*agent{c.clients["c1"], c.server} {
		u, err := a.api().Allocations().Stats(alloc.ID, nil)
		if err != nil {
			t.Fatalf("stats through %s: %v", a.name, err)
		}
		ts := u.Tasks["t"]
		if ts == nil || ts.ResourceUsage == nil || ts.ResourceUsage.MemoryStats == nil || ts.ResourceUsage.MemoryStats.RSS == 0 {
			t.Fatalf("stats through %s lack the task's memory: %+v", a.name, u)
		}
	}
}
