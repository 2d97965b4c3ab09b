package deploymentwatcher

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// BenchmarkDeploymentWatcher measures what the watcher costs per
// deployment it drives: each iteration changes the healthy count of every
// running deployment (4 allocs each) and runs one watcher pass and its
// eval batch over all of them, as the loop does after a burst of client
// reports. deployments/s is how many deployments' health changes one
// watcher turns into evals per second; the state writes the benchmark
// itself makes are outside the timer.
func BenchmarkDeploymentWatcher(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("deployments=%d", n), func(b *testing.B) {
			h := newWatcherHarness(b)
			const perDeployment = 4
			ids := make([]string, n)
			for i := 0; i < n; i++ {
				id := fmt.Sprintf("job-%04d", i)
				h.register(watcherJob(id, perDeployment, nil))
				h.deploy(id, "d-"+id, perDeployment, 0, structs.DeploymentState{ProgressDeadline: time.Hour})
				ids[i] = "d-" + id
			}
			benchWatcherPasses(b, h, ids, "job-0000")
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "deployments/s")
		})
	}
}

// benchWatcherPasses times b.N watcher passes and their eval batches, each
// after changing the healthy count of the deployments ids (outside the
// timer), so that every pass has a change to act on; job must get one eval
// per change.
func benchWatcherPasses(b *testing.B, h *watcherHarness, ids []string, job string) {
	if _, err := h.w.pass(memdb.NewWatchSet()); err != nil {
		b.Fatal(err)
	}
	h.w.flush()
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		for _, id := range ids {
			d := h.deployment(id).Copy()
			d.TaskGroups["web"].HealthyAllocs = 1 - it%2
			h.must(h.st.Write(h.next(), func(tx *state.Txn) error { return tx.UpsertDeployment(d) }))
		}
		b.StartTimer()
		if _, err := h.w.pass(memdb.NewWatchSet()); err != nil {
			b.Fatal(err)
		}
		h.w.flush()
	}
	b.StopTimer()
	if got := len(h.watcherEvals(job)); got != b.N+1 {
		b.Fatalf("%d evals for %s over %d changes, want %d", got, job, b.N, b.N+1)
	}
}
