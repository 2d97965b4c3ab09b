package reconciler

import (
	"fmt"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// BenchmarkReconcile measures the reconciler alone on a group of 1,000
// running allocs over 100 nodes: a steady state (nothing to do) and a
// destructive job update (1,000 replacements).
func BenchmarkReconcile(b *testing.B) {
	for _, tc := range []struct {
		name   string
		change func(*structs.Job)
	}{
		{"steady", nil},
		{"destructive-update", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"} }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			w := newWorld(testJob(structs.JobTypeService, 1000))
			for i := 0; i < 100; i++ {
				w.setNode(fmt.Sprintf("n%d", i), structs.NodeStatusReady)
			}
			for i := 0; i < 1000; i++ {
				w.add(i, fmt.Sprintf("n%d", i%100), structs.AllocClientStatusRunning)
			}
			if tc.change != nil {
				w.job = nextVersion(w.job, tc.change)
			}
			in := w.input()
			for b.Loop() {
				Reconcile(in)
			}
		})
	}
}

// BenchmarkReconcileRollout measures one eval of a rolling update half done
// under its deployment: 1,000 allocs over 100 nodes, 500 of the new
// version (every other one healthy), max_parallel 10. Each eval of a paced
// rollout looks at the health of every alloc of the deployment.
func BenchmarkReconcileRollout(b *testing.B) {
	w, d := rolloutWorld(1000, 500, 10, 0)
	for i := 0; i < 100; i++ {
		w.setNode(fmt.Sprintf("n%d", i), structs.NodeStatusReady)
	}
	for i, a := range w.allocs {
		a.NodeID = fmt.Sprintf("n%d", i%100)
		switch {
		case i >= 500:
		case i%2 == 0:
			healthy(a, true)
		default:
			a.DeploymentStatus = &structs.AllocDeploymentStatus{} // not yet reported
		}
	}
	in := w.input()
	in.Deployment = d
	for b.Loop() {
		Reconcile(in)
	}
}
