package state

import (
	"fmt"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// BenchmarkAllocsByEvalAndDeployment reads the allocs of one eval and of
// one deployment of a large job (10,000 allocs over 10 evals and 10
// deployments, as after nine rolling updates). Allocs by eval have no
// index and walk the job's allocs; allocs by deployment use theirs. The
// two show what the eval index was worth per read (see AllocsByEval).
func BenchmarkAllocsByEvalAndDeployment(b *testing.B) {
	const allocs, groups = 10_000, 10
	s := TestStateStore(b)
	job := testJob("big")
	if err := s.UpsertJob(1, job); err != nil {
		b.Fatal(err)
	}
	var evals []*structs.Evaluation
	for g := range groups {
		evals = append(evals, testEval(fmt.Sprintf("eval-%d", g), job))
		if err := s.UpsertDeployment(2, &structs.Deployment{ID: fmt.Sprintf("dep-%d", g), Namespace: job.Namespace, JobID: job.ID}); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.UpsertEvals(3, evals); err != nil {
		b.Fatal(err)
	}
	batch := make([]*structs.Allocation, 0, allocs)
	for i := range allocs {
		a := testAlloc(fmt.Sprintf("%08x-2222-4000-8000-%012x", i, i), job, fmt.Sprintf("node-%d", i%1000))
		a.EvalID = fmt.Sprintf("eval-%d", i%groups)
		a.DeploymentID = fmt.Sprintf("dep-%d", i%groups)
		batch = append(batch, a)
	}
	if err := s.UpsertAllocs(4, batch); err != nil {
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
}
