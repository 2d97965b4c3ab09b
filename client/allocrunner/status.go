package allocrunner

import "github.com/drover-sched/drover/structs"

// clientStatus derives an alloc's client status from its task states: any
// failed task fails the alloc; all dead (none failed) is complete; any
// running is running; otherwise pending. prev is the status reported last:
// an alloc never goes back from running to pending (a task waiting to be
// restarted does not make a running alloc pending again, and the state
// machine forbids it), and a terminal status is final.
func clientStatus(states map[string]*structs.TaskState, prev string) (string, string) {
	if structs.ClientTerminalStatus(prev) && prev != structs.AllocClientStatusLost {
		return prev, ""
	}
	var failed, running, dead int
	for _, s := range states {
		switch {
		case s.State == structs.TaskStateDead && s.Failed:
			failed++
			dead++
		case s.State == structs.TaskStateDead:
			dead++
		case s.State == structs.TaskStateRunning:
			running++
		}
	}
	switch {
	case failed > 0 && dead == len(states):
		return structs.AllocClientStatusFailed, "Failed tasks"
	case failed > 0:
		// Siblings are being stopped; report failure once they are dead,
		// but do not claim running meanwhile.
		if prev == structs.AllocClientStatusRunning {
			return structs.AllocClientStatusRunning, "Tasks are stopping after a task failed"
		}
		return structs.AllocClientStatusPending, "Tasks are stopping after a task failed"
	case len(states) > 0 && dead == len(states):
		return structs.AllocClientStatusComplete, "All tasks have completed"
	case running > 0 || prev == structs.AllocClientStatusRunning:
		return structs.AllocClientStatusRunning, "Tasks are running"
	}
	return structs.AllocClientStatusPending, "No tasks have started"
}
