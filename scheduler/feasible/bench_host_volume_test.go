package feasible

import (
	"fmt"
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
		b.Run(mode, func(b *testing.B) { benchEvaluations(b, st, job, placements) })
	}
}
