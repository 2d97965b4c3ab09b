package feasible

import (
	"fmt"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
	"pgregory.net/rapid"
)

// The incremental counts must always equal counts made from scratch, what
// ever the scheduler does to the plan between Selects: append placements,
// stops, lost and unknown markings, in-place updates, and pop stops again.
func TestJobTrackerMatchesARecount(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		nodes := mockNodes(4, func(i int, n *structs.Node) { n.Meta["rack"] = fmt.Sprintf("r%d", i%2) })
		job := twoGroupJob(3)
		other := simpleJob(1)
		var existing []*structs.Allocation
		nExisting := rapid.IntRange(0, 6).Draw(rt, "existing")
		for i := 0; i < nExisting; i++ {
			a := MockAllocFor(job, job.TaskGroups[i%2], nodes[rapid.IntRange(0, 3).Draw(rt, "node")], i)
			a.ClientStatus = rapid.SampledFrom([]string{"pending", "running", "complete", "unknown"}).Draw(rt, "status")
			existing = append(existing, a)
		}
		existing = append(existing, MockAllocFor(other, other.TaskGroups[0], nodes[0], 0))
		f := newFixture(1, nodes, existing...)
		tracker := f.ctx.jobTracker(job)
		tracker.propertyCounts("${meta.rack}", "")
		tracker.propertyCounts("${meta.rack}", "web")

		steps := rapid.IntRange(1, 25).Draw(rt, "steps")
		for s := 0; s < steps; s++ {
			switch rapid.IntRange(0, 5).Draw(rt, "op") {
			case 0: // a new placement
				tg := job.TaskGroups[rapid.IntRange(0, 1).Draw(rt, "group")]
				f.plan.AppendAlloc(MockAllocFor(job, tg, nodes[rapid.IntRange(0, 3).Draw(rt, "node")], s))
			case 1: // stop an existing alloc
				a := existing[rapid.IntRange(0, len(existing)-1).Draw(rt, "alloc")]
				f.plan.AppendStoppedAlloc(a, "stop", "", "")
			case 2: // mark one lost
				a := existing[rapid.IntRange(0, len(existing)-1).Draw(rt, "alloc")]
				f.plan.AppendLostAlloc(a, "lost", time.Unix(1, 0))
			case 3: // mark one unknown
				a := existing[rapid.IntRange(0, len(existing)-1).Draw(rt, "alloc")]
				f.plan.AppendUnknownAlloc(a, "disconnected", "", time.Unix(1, 0))
			case 4: // pop the last stop of a node
				n := nodes[rapid.IntRange(0, 3).Draw(rt, "node")]
				if us := f.plan.NodeUpdate[n.ID]; len(us) > 0 {
					f.plan.PopUpdate(us[len(us)-1])
				}
			case 5: // pop a stop and put another one in its place
				n := nodes[rapid.IntRange(0, 3).Draw(rt, "node")]
				if us := f.plan.NodeUpdate[n.ID]; len(us) > 0 {
					f.plan.PopUpdate(us[len(us)-1])
					for _, a := range existing {
						if a.NodeID == n.ID {
							f.plan.AppendStoppedAlloc(a, "stop again", "", "")
							break
						}
					}
				}
			}
			tracker.sync(f.plan)

			fresh := NewEvalContext(f.state, f.plan, nil, nil).jobTracker(job)
			for _, n := range nodes {
				for _, g := range []string{"", "web", "api"} {
					if got, want := tracker.onNode(n.ID, g), fresh.onNode(n.ID, g); got != want {
						rt.Fatalf("step %d: node %s group %q: incremental %d, recount %d", s, n.Name, g, got, want)
					}
				}
			}
			for _, g := range []string{"", "web"} {
				got, want := tracker.propertyCounts("${meta.rack}", g), fresh.propertyCounts("${meta.rack}", g)
				for _, r := range []string{"r0", "r1"} {
					if got[r] != want[r] {
						rt.Fatalf("step %d: rack %s group %q: incremental %d, recount %d", s, r, g, got[r], want[r])
					}
				}
			}
		}
	})
}

func TestInPlaceUpdateReplacesTheOldVersion(t *testing.T) {
	// The node has room for one allocation of the group, which runs there.
	newCase := func() (*fixture, *structs.Job, *structs.Node, *structs.Allocation) {
		node := MockNode()
		node.NodeResources.Memory.MemoryMB = 256 + 4000
		job := simpleJob(1)
		job.TaskGroups[0].Tasks[0].Resources.MemoryMB = 3000
		job.TaskGroups[0].Constraints = []*structs.Constraint{{Operand: structs.ConstraintDistinctHosts}}
		old := MockAllocFor(job, job.TaskGroups[0], node, 0)
		old.ClientStatus = structs.AllocClientStatusRunning
		return newFixture(1, []*structs.Node{node}, old), job, node, old
	}
	t.Run("with InPlaceAllocID the update fits", func(t *testing.T) {
		f, job, node, old := newCase()
		s := NewGenericStack(false, f.ctx)
		s.SetNodes([]*structs.Node{node})
		s.SetJob(job)
		if option := s.Select(job.TaskGroups[0], &SelectOptions{InPlaceAllocID: old.ID}); option == nil {
			t.Fatalf("the update replaces the old version: %+v", f.ctx.Metrics())
		}
		// And the old version counts again afterwards.
		if option := s.Select(job.TaskGroups[0], nil); option != nil {
			t.Fatal("a second allocation does not fit next to the first")
		}
	})
	t.Run("the Nomad way (stop, select, pop) keeps the old resources held", func(t *testing.T) {
		f, job, node, old := newCase()
		s := NewGenericStack(false, f.ctx)
		s.SetNodes([]*structs.Node{node})
		s.SetJob(job)
		f.plan.AppendStoppedAlloc(old, "in-place check", "", "")
		option := s.Select(job.TaskGroups[0], nil)
		f.plan.PopUpdate(old)
		if option != nil {
			t.Fatal("promise 1: the stopped but running version still holds its memory")
		}
		if got := f.ctx.Metrics().DimensionExhausted["memory"]; got != 1 {
			t.Fatalf("want memory exhaustion, got %+v", f.ctx.Metrics())
		}
	})
}
