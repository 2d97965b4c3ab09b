package feasible

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// Spread quality: the distribution of a group's allocations over the values
// of the spread attribute stays within one allocation of its target at every
// count, whatever the sampling looks at.

// rackFleet builds n big nodes over racks r0..r<racks-1> (meta.rack).
func rackFleet(n, racks int) []*structs.Node {
	return mockNodes(n, func(i int, node *structs.Node) {
		node.Meta["rack"] = fmt.Sprintf("r%d", i%racks)
		node.NodeResources.Cpu.CpuShares = 64000
		node.NodeResources.Memory.MemoryMB = 128 * 1024
	})
}

// allowRacks constrains the job to the racks given.
func allowRacks(job *structs.Job, racks []string) {
	job.Constraints = append(job.Constraints, &structs.Constraint{
		LTarget: "${meta.rack}", Operand: structs.ConstraintSetContainsAny, RTarget: strings.Join(racks, ","),
	})
}

func evenRacks(racks int) []string {
	var out []string
	for r := 0; r < racks; r += 2 {
		out = append(out, fmt.Sprintf("r%d", r))
	}
	return out
}

// placeCounting places count allocations of the job's first group in one
// eval, calling after with the rack of each placement and the counts per
// rack (existing allocations included) before it.
func placeCounting(t *testing.T, f *fixture, job *structs.Job, count int, counts map[string]int, after func(i int, rack string, before map[string]int)) {
	t.Helper()
	s := f.stack(job)
	tg := job.TaskGroups[0]
	for i := 0; i < count; i++ {
		option := f.place(t, s, job, tg, i, nil)
		if option == nil {
			t.Fatalf("placement %d failed: %+v", i, f.ctx.Metrics())
		}
		rack := option.Node.Meta["rack"]
		if after != nil {
			after(i, rack, counts)
		}
		counts[rack]++
	}
}

func minMax(counts map[string]int, values []string) (lo, hi int) {
	lo = math.MaxInt
	for _, v := range values {
		lo, hi = min(lo, counts[v]), max(hi, counts[v])
	}
	return lo, hi
}

// Fifty racks, half of them ruled out by a constraint (the benchmark's
// shape): every placement goes to an allowed rack with the fewest
// allocations, so after every placement the allowed racks differ by at
// most one.
func TestEvenSpreadOverFiftyRacksIsWithinOneAtEveryCount(t *testing.T) {
	allowed := evenRacks(50)
	for seed := int64(0); seed < 3; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			f := newFixture(seed, rackFleet(1000, 50))
			job := simpleJob(300)
			allowRacks(job, allowed)
			job.TaskGroups[0].Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 100}}
			counts := map[string]int{}
			placeCounting(t, f, job, 300, counts, func(i int, rack string, before map[string]int) {
				lo, _ := minMax(before, allowed)
				if !contains(allowed, rack) {
					t.Fatalf("placement %d went to %s, which the constraint rules out", i, rack)
				}
				if before[rack] != lo {
					t.Fatalf("placement %d went to %s with %d allocations, but some allowed rack had %d (%v)", i, rack, before[rack], lo, before)
				}
			})
		})
	}
}

// Existing allocations count: racks that already have some get none until
// the others have caught up, and from then on the racks stay within one.
func TestEvenSpreadCountsExistingAllocations(t *testing.T) {
	allowed := evenRacks(10)
	for seed := int64(0); seed < 3; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			nodes := rackFleet(100, 10)
			job := simpleJob(40)
			allowRacks(job, allowed)
			job.TaskGroups[0].Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 100}}
			counts := map[string]int{}
			var existing []*structs.Allocation
			// r0 has three, r2 one.
			for i, n := range []*structs.Node{nodes[0], nodes[10], nodes[20], nodes[2]} {
				a := MockAllocFor(job, job.TaskGroups[0], n, i)
				a.ClientStatus = structs.AllocClientStatusRunning
				existing = append(existing, a)
				counts[n.Meta["rack"]]++
			}
			f := newFixture(seed, nodes, existing...)
			placeCounting(t, f, job, 36, counts, func(i int, rack string, before map[string]int) {
				if lo, _ := minMax(before, allowed); before[rack] != lo {
					t.Fatalf("placement %d went to %s with %d allocations, but some allowed rack had %d (%v)", i, rack, before[rack], lo, before)
				}
			})
			if lo, hi := minMax(counts, allowed); hi-lo > 0 {
				t.Fatalf("40 allocations over 5 racks should be 8 each, got %v", counts)
			}
		})
	}
}

// With explicit targets, for every count from 1 to 60 each rack ends within
// one allocation of its share; racks without a target share what the
// targets leave, and a rack the constraint rules out takes none of it.
func TestSpreadTargetsAreWithinOneAtEveryCount(t *testing.T) {
	targets := map[string]float64{"r0": 50, "r2": 20, "r4": 10}
	// r6 and r8 are allowed without a target: 10% each; odd racks are
	// ruled out.
	allowed := evenRacks(10)
	nodes := rackFleet(100, 10)
	for count := 1; count <= 60; count++ {
		f := newFixture(int64(count), nodes)
		job := simpleJob(count)
		allowRacks(job, allowed)
		job.TaskGroups[0].Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 100, SpreadTarget: []*structs.SpreadTarget{
			{Value: "r0", Percent: 50}, {Value: "r2", Percent: 20}, {Value: "r4", Percent: 10},
		}}}
		counts := map[string]int{}
		placeCounting(t, f, job, count, counts, nil)
		for _, rack := range allowed {
			pct, ok := targets[rack]
			if !ok {
				pct = 10
			}
			want := pct / 100 * float64(count)
			if math.Abs(float64(counts[rack])-want) > 1 {
				t.Fatalf("count %d: %s got %d allocations, want %.1f±1 (all %v)", count, rack, counts[rack], want, sortedCounts(counts))
			}
		}
	}
}

// A job scaled up over several evaluations, each committing its placements
// before the next one runs, stays within one of an even spread.
func TestEvenSpreadAcrossSeveralEvals(t *testing.T) {
	allowed := evenRacks(20)
	nodes := rackFleet(400, 20)
	job := simpleJob(0)
	allowRacks(job, allowed)
	job.TaskGroups[0].Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 100}}
	var existing []*structs.Allocation
	counts := map[string]int{}
	for eval, count := range []int{3, 7, 18, 31, 50} {
		job.TaskGroups[0].Count = count
		f := newFixture(int64(eval), nodes, existing...)
		placeCounting(t, f, job, count-len(existing), counts, nil)
		for _, allocs := range f.plan.NodeAllocation {
			for _, a := range allocs {
				a.ClientStatus = structs.AllocClientStatusRunning
				existing = append(existing, a)
			}
		}
		if lo, hi := minMax(counts, allowed); hi-lo > 1 {
			t.Fatalf("eval %d, count %d: racks differ by %d (%v)", eval, count, hi-lo, sortedCounts(counts))
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func sortedCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, m[k])
	}
	return b.String()
}

// Targets hold across evaluations too: a job scaled up several times, each
// evaluation committing its placements, ends every evaluation within one
// allocation of each share of its new count.
func TestSpreadTargetsAcrossSeveralEvals(t *testing.T) {
	allowed := evenRacks(10)
	nodes := rackFleet(100, 10)
	job := simpleJob(0)
	allowRacks(job, allowed)
	job.TaskGroups[0].Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 100, SpreadTarget: []*structs.SpreadTarget{
		{Value: "r0", Percent: 40}, {Value: "r2", Percent: 30},
	}}}
	// r4, r6 and r8 share the 30% left: 10% each.
	share := map[string]float64{"r0": 40, "r2": 30, "r4": 10, "r6": 10, "r8": 10}
	var existing []*structs.Allocation
	counts := map[string]int{}
	for eval, count := range []int{4, 9, 20, 33, 50} {
		job.TaskGroups[0].Count = count
		f := newFixture(int64(eval), nodes, existing...)
		placeCounting(t, f, job, count-len(existing), counts, nil)
		for _, allocs := range f.plan.NodeAllocation {
			for _, a := range allocs {
				a.ClientStatus = structs.AllocClientStatusRunning
				existing = append(existing, a)
			}
		}
		for _, rack := range allowed {
			want := share[rack] / 100 * float64(count)
			if math.Abs(float64(counts[rack])-want) > 1 {
				t.Fatalf("eval %d, count %d: %s has %d allocations, want %.1f±1 (all %v)", eval, count, rack, counts[rack], want, sortedCounts(counts))
			}
		}
	}
}
