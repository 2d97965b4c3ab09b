package planner_test

import (
	"testing"

	"github.com/drover-sched/drover/helper/telemetry/telemetrytest"
	"github.com/drover-sched/drover/nomad/planner"
)

// The plan applier times each plan and counts what it placed and which
// nodes it refused.
func TestMetricsPlanApplierCountsPlacementsAndRefusals(t *testing.T) {
	m, sink := telemetrytest.New()
	h := newPlanHarness(t)
	node := h.node(nil)
	job := h.job()
	h.start(planner.Config{Workers: 2, GroupCommit: true, Metrics: m}, false)

	h.mustSubmit(testPlan(job, testAllocOn(job, node, 100, 64), testAllocOn(job, node, 100, 64)))
	if _, sum := sink.Counter("nomad.nomad.plan.allocs_placed"); sum != 2 {
		t.Fatalf("allocs_placed = %v after a plan placing two, want 2", sum)
	}
	for _, timer := range []string{"nomad.nomad.plan.evaluate", "nomad.nomad.plan.apply"} {
		if n, _ := sink.Sample(timer); n != 1 {
			t.Fatalf("%s has %d samples after one plan, want 1", timer, n)
		}
	}
	if n, _ := sink.Counter("nomad.nomad.plan.node_rejected"); n != 0 {
		t.Fatal("a node counted as refused when it fit")
	}

	res := h.mustSubmit(testPlan(job, testAllocOn(job, node, 1_000_000, 64)))
	if len(res.RejectedNodes) != 1 {
		t.Fatalf("the plan that does not fit was not refused: %+v", res)
	}
	if n, _ := sink.Counter("nomad.nomad.plan.node_rejected", "node_id", node.ID); n != 1 {
		t.Fatalf("node_rejected for %s = %d, want 1", node.ID, n)
	}
	if _, sum := sink.Counter("nomad.nomad.plan.allocs_placed"); sum != 2 {
		t.Fatalf("a refused placement was counted as placed: %v", sum)
	}
}
