package state

import (
	"fmt"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// BenchmarkAllocsByEvalAndDeployment reads the allocs of one eval and of
// one deployment of a large job (10,000 allocs over 10 evals and 10
// deployments, as after nine rolling updates). Allocs by eval have no
// index and walk the job's allocs; allocs by deployment walk their part
// of the job index. The two show what the eval index was worth per read
// (see AllocsByEval).
//
// Alloc IDs are in no relation to the order allocs were made, as random
// UUIDs are. "rolling" makes each deployment's allocs together, as
// rolling updates do; "interleaved" deals the allocs out to the
// deployments in turn, which no scheduler does, and shows what reads of
// a job cost when consecutive entries are far apart in memory.
func BenchmarkAllocsByEvalAndDeployment(b *testing.B) {
	const allocs, groups = 10_000, 10
	layouts := []struct {
		name  string
		group func(i int) int
	}{
		{"rolling", func(i int) int { return i / (allocs / groups) }},
		{"interleaved", func(i int) int { return i % groups }},
	}
	for _, layout := range layouts {
		b.Run(layout.name, func(b *testing.B) {
			s := testStateStore(b)
			job := testJob("big")
			if err := s.Write(1, func(tx *Txn) error { return tx.UpsertJob(job) }); err != nil {
				b.Fatal(err)
			}
			var evals []*structs.Evaluation
			for g := range groups {
				evals = append(evals, testEval(fmt.Sprintf("eval-%d", g), job))
				if err := s.Write(2, func(tx *Txn) error {
					return tx.UpsertDeployment(&structs.Deployment{ID: fmt.Sprintf("dep-%d", g), Namespace: job.Namespace, JobID: job.ID})
				}); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Write(3, func(tx *Txn) error { return tx.UpsertEvals(evals) }); err != nil {
				b.Fatal(err)
			}
			batch := make([]*structs.Allocation, 0, allocs)
			for i := range allocs {
				// 7919 is prime to 10,000: every ID once, out of order.
				a := testAlloc(fmt.Sprintf("%08x-2222-4000-8000-%012x", (i*7919)%allocs, i), job, fmt.Sprintf("node-%d", i%1000))
				a.EvalID = fmt.Sprintf("eval-%d", layout.group(i))
				a.DeploymentID = fmt.Sprintf("dep-%d", layout.group(i))
				batch = append(batch, a)
			}
			if err := s.Write(4, func(tx *Txn) error { return tx.UpsertAllocs(batch) }); err != nil {
				b.Fatal(err)
			}
			b.Run("eval", func(b *testing.B) {
				for i := range b.N {
					got, err := s.AllocsByEval(nil, fmt.Sprintf("eval-%d", i%groups))
					if err != nil || len(got) != allocs/groups {
						b.Fatalf("%d allocs, %v", len(got), err)
					}
				}
			})
			b.Run("deployment", func(b *testing.B) {
				for i := range b.N {
					got, err := s.AllocsByDeployment(nil, fmt.Sprintf("dep-%d", i%groups))
					if err != nil || len(got) != allocs/groups {
						b.Fatalf("%d allocs, %v", len(got), err)
					}
				}
			})
		})
	}
}
