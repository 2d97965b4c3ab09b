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
