package deploymentwatcher

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// BenchmarkDeploymentWatcherLargeJob is BenchmarkDeploymentWatcher for
// one deployment of 1,000 allocs in a job that also has 9,000 allocs of
// its previous, finished deployment: what one watcher pass costs when a
// deployment's allocs are a tenth of its job's. It is why allocs keep an
// index by deployment (state.StateStore.AllocsByDeployment): without one a pass
// read all the job's allocs and cost 0.5-0.8 ms instead of 0.06 ms.
func BenchmarkDeploymentWatcherLargeJob(b *testing.B) {
	h := newWatcherHarness(b)
	h.register(watcherJob("big", 10_000, nil))
	h.deploy("big", "d-old", 9_000, 0, structs.DeploymentState{ProgressDeadline: time.Hour})
	h.setStatus("d-old", structs.DeploymentStatusSuccessful)
	h.deploy("big", "d-new", 1_000, 0, structs.DeploymentState{ProgressDeadline: time.Hour})
	benchWatcherPasses(b, h, []string{"d-new"}, "big")
}
