package client

import (
	"testing"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/helper/telemetry/telemetrytest"
	"github.com/drover-sched/drover/structs"
)

// The client's allocations by state follow its runners, with the node's
// labels; the host's and the tasks' usage are published when asked for.
func TestMetricsClientAllocationsByStateAndUsage(t *testing.T) {
	m, sink := telemetrytest.New()
	e := newEnv(t, 0)
	c := e.start(func(cfg *config.Config) {
		cfg.Metrics = m
		cfg.PublishNodeMetrics = true
		cfg.PublishAllocationMetrics = true
	})
	node := []string{"node_id", c.NodeID(), "datacenter", "dc1"}
	gauge := func(state string) float32 {
		t.Helper()
		c.emitStats()
		v, ok := sink.Gauge("nomad.client.allocations."+state, node...)
		if !ok {
			t.Fatalf("nomad.client.allocations.%s never set", state)
		}
		return v
	}
	if gauge("running") != 0 || gauge("terminal") != 0 {
		t.Fatal("allocations counted before any was assigned")
	}
	running := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeService, mockTask(map[string]any{"run_for": "1h"}))))
	done := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeBatch, mockTask(map[string]any{"run_for": "1s"}))))
	e.waitServerStatus(running.ID, structs.AllocClientStatusRunning)
	e.waitServerStatus(done.ID, structs.AllocClientStatusComplete)
	if r, term, p := gauge("running"), gauge("terminal"), gauge("pending"); r != 1 || term != 1 || p != 0 {
		t.Fatalf("running %v, terminal %v, pending %v; want 1, 1, 0", r, term, p)
	}
	if v, ok := sink.Gauge("nomad.client.host.memory.total", node...); !ok || v <= 0 {
		t.Fatalf("publish_node_metrics: host memory total %v (set %v)", v, ok)
	}
	if _, ok := sink.Gauge("nomad.client.allocs.memory.rss", "alloc_id", running.ID, "task", "web"); !ok {
		t.Fatal("publish_allocation_metrics: the running task's memory is not published")
	}
	if _, ok := sink.Gauge("nomad.client.allocs.memory.rss", "alloc_id", done.ID); ok {
		t.Fatal("a finished allocation's tasks are published as if running")
	}
}
