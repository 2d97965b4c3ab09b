package scheduler

import (
	"fmt"
	"testing"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/scheduler/feasible"
	"github.com/drover-sched/drover/structs"
)

// BenchmarkServicePlacement measures one registration eval of a service
// job of count 1, 10, 100 and 1,000 on clusters of 1,000 and 5,000 nodes
// (ten datacenters), packed by binpack alone or spread over the
// datacenters by a spread block. Every iteration schedules the same eval
// on the same snapshot (no allocs yet) with a planner that commits
// nothing, so each one places the whole count. It reports evals/s and
// placements/s.
func BenchmarkServicePlacement(b *testing.B) {
	for _, nodes := range []int{1000, 5000} {
		h := NewHarness(b)
		for i := 0; i < nodes; i++ {
			h.Node(func(n *structs.Node) { n.Datacenter = fmt.Sprintf("dc%d", i%10+1) })
		}
		for _, variant := range []string{"binpack", "spread"} {
			for _, count := range []int{1, 10, 100, 1000} {
				job := feasible.MockJob()
				job.ID = fmt.Sprintf("bench-%s-%d", variant, count)
				job.Datacenters = []string{"dc*"}
				job.TaskGroups[0].Count = count
				if variant == "spread" {
					job.Spreads = []*structs.Spread{{Attribute: "${node.datacenter}", Weight: 100}}
				}
				job = h.Job(job)
				eval := h.Eval(job, structs.EvalTriggerJobRegister)
				snap := h.snapshot()
				b.Run(fmt.Sprintf("nodes=%d/%s/count=%d", nodes, variant, count), func(b *testing.B) {
					benchPlacement(b, h, snap, job, eval, count)
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "evals/s")
				})
			}
		}
	}
}

// benchPlacement schedules eval (count placements of job) b.N times on
// snap, committing nothing, and reports placements/s.
func benchPlacement(b *testing.B, h *Harness, snap *state.StateSnapshot, job *structs.Job, eval *structs.Evaluation, count int) {
	p := &countingPlanner{}
	for b.Loop() {
		s, err := NewScheduler(job.Type, Config{State: snap, Planner: p, Now: h.Now})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Process(eval); err != nil {
			b.Fatal(err)
		}
	}
	if p.placed != b.N*count {
		b.Fatalf("placed %d allocs in %d evals, want %d each", p.placed, b.N, count)
	}
	b.ReportMetric(float64(p.placed)/b.Elapsed().Seconds(), "placements/s")
}

// countingPlanner counts placements and commits nothing.
type countingPlanner struct{ placed int }

func (c *countingPlanner) SubmitPlan(p *structs.Plan) (*structs.PlanResult, State, error) {
	for _, allocs := range p.NodeAllocation {
		c.placed += len(allocs)
	}
	return &structs.PlanResult{NodeAllocation: p.NodeAllocation, NodeUpdate: p.NodeUpdate}, nil, nil
}
func (c *countingPlanner) UpdateEval(*structs.Evaluation) error  { return nil }
func (c *countingPlanner) CreateEval(*structs.Evaluation) error  { return nil }
func (c *countingPlanner) ReblockEval(*structs.Evaluation) error { return nil }
