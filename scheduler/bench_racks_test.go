package scheduler

import (
	"fmt"
	"strings"
	"testing"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/scheduler/feasible"
	"github.com/drover-sched/drover/structs"
)

// Rack benchmark shape: the shape of Nomad's BenchmarkServiceScheduler,
// whose spread is over a many-valued attribute. Spread over ten
// datacenters (BenchmarkServicePlacement) hides costs that grow with the
// number of values and with nodes a constraint rules out.
const (
	benchRacks = 50
)

// benchRackNodeCounts and benchRackAllocCounts are the fleet sizes and
// group counts measured.
var (
	benchRackNodeCounts  = []int{5000, 10000}
	benchRackAllocCounts = []int{300, 1200}
)

// BenchmarkServicePlacementRacks measures one registration eval of a
// service job on 5,000 and 10,000 nodes spread over 50 racks (meta.rack =
// r0..r49), of which a set_contains_any constraint allows half (the even
// racks), placing 300 or 1,200 allocations packed by binpack alone or
// spread over the racks by `spread { attribute = "${meta.rack}" }`, or
// spread over a value per node (${node.unique.id}: a bucket per node);
// then 1,200 again with five of the allowed racks full of other work. Every
// iteration schedules the same eval on the same snapshot with a planner
// that commits nothing. It reports placements/s; compare spread with
// binpack within one run, the machine's load moves both.
func BenchmarkServicePlacementRacks(b *testing.B) {
	for _, nodes := range benchRackNodeCounts {
		benchRacksOn(b, nodes, 0, benchRackAllocCounts)
		// Five allowed racks full of other work: spread prefers them (the
		// job has nothing there), and every Select offers their nodes
		// first.
		benchRacksOn(b, nodes, 5, benchRackAllocCounts[len(benchRackAllocCounts)-1:])
	}
}

// benchRacksOn builds a fleet of nodes over the racks, the first full of
// the allowed racks with an allocation of another job that takes nearly
// all of each node's CPU, and runs the binpack and spread cells for each
// count.
func benchRacksOn(b *testing.B, nodes, full int, counts []int) {
	allowed := make([]string, 0, benchRacks/2)
	for r := 0; r < benchRacks; r += 2 {
		allowed = append(allowed, fmt.Sprintf("r%d", r))
	}
	h := NewHarness(b)
	filler := feasible.MockJob()
	filler.ID = "bench-racks-filler"
	filler.TaskGroups[0].Tasks[0].Resources.CPU = 3800
	filler = h.Job(filler)
	var fillers []*structs.Allocation
	for i := 0; i < nodes; i++ {
		n := h.Node(func(n *structs.Node) {
			n.Meta["rack"] = fmt.Sprintf("r%d", i%benchRacks)
		})
		if rack := i % benchRacks; rack%2 == 0 && rack/2 < full {
			a := feasible.MockAllocFor(filler, filler.TaskGroups[0], n, len(fillers))
			a.ClientStatus = structs.AllocClientStatusRunning
			fillers = append(fillers, a)
		}
	}
	if len(fillers) > 0 {
		if err := h.State.Write(h.next(), func(tx *state.Txn) error { return tx.UpsertAllocs(fillers) }); err != nil {
			b.Fatal(err)
		}
	}
	prefix := fmt.Sprintf("nodes=%d", nodes)
	if full > 0 {
		prefix += fmt.Sprintf("/full-racks=%d", full)
	}
	for _, count := range counts {
		for _, variant := range []string{"binpack", "spread", "spread-node"} {
			job := feasible.MockJob()
			job.ID = fmt.Sprintf("bench-racks-%s-%d", variant, count)
			job.TaskGroups[0].Count = count
			job.Constraints = append(job.Constraints, &structs.Constraint{
				LTarget: "${meta.rack}", Operand: structs.ConstraintSetContainsAny,
				RTarget: strings.Join(allowed, ","),
			})
			switch variant {
			case "spread":
				job.Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 100}}
			case "spread-node":
				// A value per node: as many buckets as allowed nodes.
				job.Spreads = []*structs.Spread{{Attribute: "${node.unique.id}", Weight: 100}}
			}
			job = h.Job(job)
			eval := h.Eval(job, structs.EvalTriggerJobRegister)
			snap := h.snapshot()
			b.Run(fmt.Sprintf("%s/allocs=%d/%s", prefix, count, variant), func(b *testing.B) {
				benchPlacement(b, h, snap, job, eval, count)
			})
		}
	}
}
