package feasible

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// BenchmarkSelect places N allocations of one group on a cluster, the way
// the scheduler does (Select, then append to the plan), with the binpack
// default and with a spread block over ten datacenters. Each iteration is
// one whole evaluation: a fresh context, stack and plan.
func BenchmarkSelect(b *testing.B) {
	for _, clusterSize := range []int{1000, 5000} {
		nodes := mockNodes(clusterSize, func(i int, n *structs.Node) {
			n.Datacenter = fmt.Sprintf("dc%d", i%10)
			// Big enough that 1,000 placements never exhaust the cluster.
			n.NodeResources.Cpu.CpuShares = 64000
			n.NodeResources.Memory.MemoryMB = 256 * 1024
		})
		st := newMemState().addNodes(nodes...)
		for _, placements := range []int{1, 10, 100, 1000} {
			for _, mode := range []string{"binpack", "spread"} {
				job := MockJob()
				job.Datacenters = []string{"*"}
				tg := job.TaskGroups[0]
				tg.Count = placements
				if mode == "spread" {
					tg.Spreads = []*structs.Spread{{Attribute: "${node.datacenter}", Weight: 100}}
				}
				name := fmt.Sprintf("nodes=%d/allocs=%d/%s", clusterSize, placements, mode)
				b.Run(name, func(b *testing.B) { benchEvaluations(b, st, job, placements) })
			}
		}
	}
}

// benchEvaluations runs b.N whole evaluations placing placements
// allocations of job's first group, each with a fresh context, stack and
// plan, and reports placements per second.
func benchEvaluations(b *testing.B, st *memState, job *structs.Job, placements int) {
	tg := job.TaskGroups[0]
	ready, _, err := ReadyNodesInDCsAndPool(st, job.Datacenters, job.NodePool)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		plan := &structs.Plan{NodeUpdate: map[string][]*structs.Allocation{}, NodeAllocation: map[string][]*structs.Allocation{}}
		ctx := NewEvalContext(st, plan, rand.New(rand.NewSource(int64(i))), nil)
		s := NewGenericStack(false, ctx)
		s.SetNodes(ready)
		s.SetJob(job)
		for p := 0; p < placements; p++ {
			name := structs.AllocName(job.ID, tg.Name, p)
			option := s.Select(tg, &SelectOptions{AllocName: name})
			if option == nil {
				b.Fatalf("placement %d failed: %+v", p, ctx.Metrics())
			}
			plan.AppendAlloc(&structs.Allocation{
				ID: MockID(), Name: name, Namespace: job.Namespace, JobID: job.ID, TaskGroup: tg.Name,
				NodeID: option.Node.ID, AllocatedResources: option.Resources,
				DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending,
			})
		}
	}
	b.ReportMetric(float64(b.N*placements)/b.Elapsed().Seconds(), "placements/s")
}
