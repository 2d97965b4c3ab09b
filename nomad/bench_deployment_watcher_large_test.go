package nomad

import (
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/structs"
)

// BenchmarkDeploymentWatcherLargeJob is BenchmarkDeploymentWatcher for
// one deployment of 1,000 allocs in a job that also has 9,000 allocs of
// its previous, finished deployment: what one watcher pass costs when a
// deployment's allocs are a tenth of its job's. It is why allocs keep an
// index by deployment (state.StateStore.AllocsByEval): without one a pass
// read all the job's allocs and cost 0.5-0.8 ms instead of 0.06 ms.
func BenchmarkDeploymentWatcherLargeJob(b *testing.B) {
	h := newWatcherHarness(b)
	h.register(watcherJob("big", 10_000, nil))
	h.deploy("big", "d-old", 9_000, 0, structs.DeploymentState{ProgressDeadline: time.Hour})
	h.setStatus("d-old", structs.DeploymentStatusSuccessful)
	h.deploy("big", "d-new", 1_000, 0, structs.DeploymentState{ProgressDeadline: time.Hour})
	if _, err := h.w.pass(memdb.NewWatchSet()); err != nil {
		b.Fatal(err)
	}
	h.w.flush()
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		d := h.deployment("d-new").Copy()
		d.TaskGroups["web"].HealthyAllocs = 1 - it%2
		h.must(h.st.UpsertDeployment(h.next(), d))
		b.StartTimer()
		if _, err := h.w.pass(memdb.NewWatchSet()); err != nil {
			b.Fatal(err)
		}
		h.w.flush()
	}
	b.StopTimer()
	if got := len(h.watcherEvals("big")); got != b.N+1 {
		b.Fatalf("%d evals over %d changes, want %d", got, b.N, b.N+1)
	}
}
