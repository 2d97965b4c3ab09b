package feasible

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// BenchmarkSelectHostVolume places 100 allocations on 5,000 nodes of which
// one in ten has the host volume "data": without a volume, with a shared
// one (a static check, verdicts kept per node for the evaluation) and
// per_alloc (checked again at every placement, each allocation's volume
// on its own nodes).
func BenchmarkSelectHostVolume(b *testing.B) {
	const clusterSize, placements = 5000, 100
	nodes := mockNodes(clusterSize, func(i int, n *structs.Node) {
		n.NodeResources.Cpu.CpuShares = 64000
		n.NodeResources.Memory.MemoryMB = 256 * 1024
		if i%10 == 0 {
			n.NodeResources.HostVolumes = map[string]*structs.ClientHostVolumeConfig{
				"data":                                   {Name: "data", Path: "/srv/data"},
				fmt.Sprintf("data[%d]", i/10%placements): {Name: "data[i]", Path: "/srv/data-i"},
			}
		}
	})
	st := newMemState().addNodes(nodes...)
	for _, mode := range []string{"none", "shared", "per_alloc"} {
		job := MockJob()
		job.Datacenters = []string{"*"}
		tg := job.TaskGroups[0]
		tg.Count = placements
		if mode != "none" {
			tg.Volumes = map[string]*structs.VolumeRequest{"v": {Name: "v", Type: structs.VolumeTypeHost, Source: "data", PerAlloc: mode == "per_alloc"}}
		}
		b.Run(mode, func(b *testing.B) {
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
		})
	}
}
