package taskrunner

import (
	metrics "github.com/hashicorp/go-metrics"

	"github.com/drover-sched/drover/structs"
)

// A task's counters carry Nomad's names and labels, so Nomad's
// dashboards count Drover's task starts and restarts too: running counts
// every start of the task (Nomad's name for "a task started"), restart
// every restart, by the restart policy or a user, and failed or complete
// how it ended.
var (
	keyTaskRunning  = []string{"client", "allocs", "running"}
	keyTaskRestart  = []string{"client", "allocs", "restart"}
	keyTaskFailed   = []string{"client", "allocs", "failed"}
	keyTaskComplete = []string{"client", "allocs", "complete"}
)

// taskLabels are Nomad's labels of a task's metrics.
func taskLabels(a *structs.Allocation, task string) []metrics.Label {
	return []metrics.Label{
		{Name: "job", Value: a.JobID},
		{Name: "task_group", Value: a.TaskGroup},
		{Name: "alloc_id", Value: a.ID},
		{Name: "task", Value: task},
		{Name: "namespace", Value: a.Namespace},
	}
}

func (tr *TaskRunner) count(key []string) {
	tr.cfg.Metrics.IncrCounterWithLabels(key, 1, tr.metricLabels)
}

// countEnd counts a task that is dead for good, once.
func (tr *TaskRunner) countEnd(failed bool) {
	tr.mu.Lock()
	already := tr.state != nil && tr.state.State == structs.TaskStateDead
	tr.mu.Unlock()
	if already {
		return
	}
	if failed {
		tr.count(keyTaskFailed)
	} else {
		tr.count(keyTaskComplete)
	}
}
