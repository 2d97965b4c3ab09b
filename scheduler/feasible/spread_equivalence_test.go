package feasible

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
	"pgregory.net/rapid"
)

// The bucketed source leaves out the nodes that a check that cannot change
// during the evaluation refuses (source.go), and puts full nodes to sleep
// until the plan touches them (sleep.go); the ring remembers each node's
// static verdict (ring_verdicts.go). That must change nothing but the work
// done: on random fleets and jobs, a stack that does all this and one that
// checks every node on every Select (fullWalk) choose the same node with
// the same scores at every placement, explain the same top candidates,
// count the same exhausted nodes, and when a placement fails (or the
// group walks the ring) report exactly the same metrics.
func TestLeavingOutInfeasibleNodesChangesNoPlacement(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		nRacks := rapid.IntRange(1, 10).Draw(rt, "racks")
		nNodes := rapid.IntRange(1, 120).Draw(rt, "nodes")
		nodes := mockNodes(nNodes, func(i int, n *structs.Node) {
			n.Datacenter = fmt.Sprintf("dc%d", rapid.IntRange(1, 3).Draw(rt, "dc"))
			if rapid.IntRange(0, 9).Draw(rt, "has rack") > 0 {
				n.Meta["rack"] = fmt.Sprintf("r%d", rapid.IntRange(0, nRacks-1).Draw(rt, "rack"))
			}
			n.NodeResources.Cpu.CpuShares = rapid.SampledFrom([]int64{1000, 4000, 64000}).Draw(rt, "cpu")
			switch rapid.IntRange(0, 9).Draw(rt, "health") {
			case 0:
				n.Status = structs.NodeStatusDown
			case 1:
				n.Drivers["exec"] = &structs.DriverInfo{Detected: true, Healthy: false}
			}
		})

		job := simpleJob(rapid.IntRange(1, 40).Draw(rt, "count"))
		tg := job.TaskGroups[0]
		if rapid.Bool().Draw(rt, "rack constraint") {
			var allowed []string
			for r := 0; r < nRacks; r++ {
				if rapid.Bool().Draw(rt, "allowed") {
					allowed = append(allowed, fmt.Sprintf("r%d", r))
				}
			}
			job.Constraints = append(job.Constraints, &structs.Constraint{
				LTarget: "${meta.rack}", Operand: structs.ConstraintSetContainsAny, RTarget: strings.Join(allowed, ","),
			})
		}
		// A value per node (${node.unique.id}) makes a bucket per node.
		for _, attr := range []string{"${meta.rack}", "${node.datacenter}", "${node.unique.id}"} {
			if !rapid.Bool().Draw(rt, "spread on "+attr) {
				continue
			}
			sp := &structs.Spread{Attribute: attr, Weight: int8(rapid.IntRange(1, 100).Draw(rt, "weight"))}
			if rapid.Bool().Draw(rt, "targets") {
				sp.SpreadTarget = []*structs.SpreadTarget{
					{Value: "r0", Percent: uint8(rapid.IntRange(0, 60).Draw(rt, "r0%"))},
					{Value: "dc1", Percent: uint8(rapid.IntRange(0, 40).Draw(rt, "dc1%"))},
				}
			}
			tg.Spreads = append(tg.Spreads, sp)
		}
		if rapid.Bool().Draw(rt, "affinity") {
			tg.Affinities = []*structs.Affinity{{LTarget: "${node.datacenter}", RTarget: "dc2", Operand: "=", Weight: 50}}
		}
		// Without spread or affinity blocks the group walks the ring
		// (ring_verdicts.go), whose metrics are exactly the plain ring's.
		ring := len(tg.Spreads) == 0 && len(tg.Affinities) == 0
		switch rapid.IntRange(0, 2).Draw(rt, "distinct") {
		case 1:
			tg.Constraints = append(tg.Constraints, &structs.Constraint{Operand: structs.ConstraintDistinctHosts})
		case 2:
			tg.Constraints = append(tg.Constraints, &structs.Constraint{
				Operand: structs.ConstraintDistinctProperty, LTarget: "${meta.rack}", RTarget: "3",
			})
		}

		var existing []*structs.Allocation
		for i := rapid.IntRange(0, 8).Draw(rt, "existing"); i > 0; i-- {
			a := MockAllocFor(job, tg, nodes[rapid.IntRange(0, nNodes-1).Draw(rt, "existing node")], i)
			a.ClientStatus = structs.AllocClientStatusRunning
			existing = append(existing, a)
		}
		// Racks full of other work: their nodes keep the best spread
		// score, are full, and sleep (sleep.go) until the plan frees one.
		filler := MockJob()
		filler.ID = "filler"
		fullRacks := map[string]bool{}
		for r := 0; r < nRacks; r++ {
			fullRacks[fmt.Sprintf("r%d", r)] = rapid.IntRange(0, 3).Draw(rt, "rack full") == 0
		}
		var fillers []*structs.Allocation
		for _, n := range nodes {
			if fullRacks[n.Meta["rack"]] {
				a := MockAllocFor(filler, filler.TaskGroups[0], n, len(fillers))
				a.ClientStatus = structs.AllocClientStatusRunning
				a.AllocatedResources.Tasks["web"].Cpu.CpuShares = n.NodeResources.Cpu.CpuShares - 400
				fillers = append(fillers, a)
			}
		}
		seed := rapid.Int64().Draw(rt, "seed")
		all := append(append([]*structs.Allocation(nil), existing...), fillers...)
		fast, full := newFixture(seed, nodes, all...), newFixture(seed, nodes, all...)
		fastStack, fullStack := fast.stack(job), full.stack(job)
		fullStack.(*GenericStack).fullWalk = true

		for p := 0; p < tg.Count; p++ {
			opts := &SelectOptions{}
			if rapid.IntRange(0, 4).Draw(rt, "penalty") == 0 {
				opts.PenaltyNodeIDs = map[string]struct{}{nodes[rapid.IntRange(0, nNodes-1).Draw(rt, "penalised")].ID: {}}
			}
			if len(existing) > 0 {
				// Between placements the scheduler may mark an
				// allocation lost, which frees its node, or update one
				// in place, which frees its share for that Select.
				a := existing[rapid.IntRange(0, len(existing)-1).Draw(rt, "touched")]
				switch rapid.IntRange(0, 5).Draw(rt, "change") {
				case 0:
					fast.plan.AppendLostAlloc(a, "lost", time.Unix(1, 0))
					full.plan.AppendLostAlloc(a, "lost", time.Unix(1, 0))
				case 1:
					opts.InPlaceAllocID = a.ID
				}
			}
			if len(fillers) > 0 && rapid.IntRange(0, 4).Draw(rt, "free a full node") == 0 {
				a := fillers[rapid.IntRange(0, len(fillers)-1).Draw(rt, "freed")]
				fast.plan.AppendLostAlloc(a, "lost", time.Unix(1, 0))
				full.plan.AppendLostAlloc(a, "lost", time.Unix(1, 0))
			}
			a, b := fastStack.Select(tg, opts), fullStack.Select(tg, opts)
			ma, mb := fast.ctx.Metrics(), full.ctx.Metrics()
			if (a == nil) != (b == nil) {
				rt.Fatalf("placement %d: fast path chose %v, the full walk %v", p, nodeID(a), nodeID(b))
			}
			if ring && !reflect.DeepEqual(ma, mb) {
				rt.Fatalf("placement %d: the ring's metrics differ:\nfast path %+v\nfull walk %+v", p, ma, mb)
			}
			if a == nil {
				if !reflect.DeepEqual(ma, mb) {
					rt.Fatalf("placement %d failed with different metrics:\nfast path %+v\nfull walk %+v", p, ma, mb)
				}
				return
			}
			if a.Node.ID != b.Node.ID || a.FinalScore != b.FinalScore || !reflect.DeepEqual(a.Scores, b.Scores) {
				rt.Fatalf("placement %d: fast path chose %s (%v %v), the full walk %s (%v %v)",
					p, a.Node.ID, a.FinalScore, a.Scores, b.Node.ID, b.FinalScore, b.Scores)
			}
			if !reflect.DeepEqual(ma.ScoreMetaData, mb.ScoreMetaData) {
				rt.Fatalf("placement %d: different top candidates:\nfast path %v\nfull walk %v", p, ma.ScoreMetaData, mb.ScoreMetaData)
			}
			if ma.NodesExhausted != mb.NodesExhausted || !reflect.DeepEqual(ma.DimensionExhausted, mb.DimensionExhausted) ||
				!reflect.DeepEqual(ma.ClassExhausted, mb.ClassExhausted) {
				rt.Fatalf("placement %d: different exhaustion: fast path %+v, full walk %+v", p, ma, mb)
			}
			if ma.NodesEvaluated > mb.NodesEvaluated {
				rt.Fatalf("placement %d: fast path looked at %d nodes, more than the full walk's %d", p, ma.NodesEvaluated, mb.NodesEvaluated)
			}
			for i, f := range []*fixture{fast, full} {
				alloc := MockAllocFor(job, tg, []*RankedNode{a, b}[i].Node, p)
				alloc.ID = fmt.Sprintf("placed-%d", p)
				alloc.AllocatedResources = []*RankedNode{a, b}[i].Resources
				f.plan.AppendAlloc(alloc)
			}
		}
	})
}

func nodeID(o *RankedNode) string {
	if o == nil {
		return "nothing"
	}
	return o.Node.ID
}

// Nodes left out of the buckets are not looked at again, but a placement
// that fails still names every one of them in its metrics: a blocked
// evaluation explains the whole fleet, as the full walk would.
func TestAFailedSpreadPlacementExplainsEveryNode(t *testing.T) {
	nodes := rackFleet(40, 4)
	f := newFixture(1, nodes)
	job := simpleJob(3)
	allowRacks(job, []string{"r0"})
	tg := job.TaskGroups[0]
	tg.Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 100}}
	tg.Tasks[0].Resources.CPU = 40000 // fits once per node of r0
	s := f.stack(job)
	for i := 0; i < 10; i++ {
		if f.place(t, s, job, tg, i, nil) == nil {
			t.Fatalf("placement %d failed with r0's ten nodes free: %+v", i, f.ctx.Metrics())
		}
	}
	if f.place(t, s, job, tg, 10, nil) != nil {
		t.Fatal("r0's nodes are all full, the placement should fail")
	}
	m := f.ctx.Metrics()
	reason := constraintReason(job.Constraints[len(job.Constraints)-1])
	if m.NodesEvaluated != 40 || m.NodesFiltered != 30 || m.ConstraintFiltered[reason] != 30 || m.NodesExhausted != 10 || m.DimensionExhausted["cpu"] != 10 {
		t.Fatalf("want 40 nodes evaluated: 30 filtered by %q and 10 exhausted on cpu; got %+v", reason, m)
	}
}
