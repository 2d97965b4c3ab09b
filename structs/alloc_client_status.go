package structs

// ClientStatusFromTasks derives an alloc's client status from its task
// states: any failed task fails the alloc; all dead (none failed) is
// complete; any running is running; otherwise pending. prev is the status reported last:
// an alloc never goes back from running to pending (a task waiting to be
// restarted does not make a running alloc pending again, and the state
// machine forbids it), and a terminal status is final. The client's alloc
// runner and the node simulator both report by it.
func ClientStatusFromTasks(states map[string]*TaskState, prev string) (string, string) {
	if ClientTerminalStatus(prev) && prev != AllocClientStatusLost {
		return prev, ""
	}
	var failed, running, dead int
	for _, s := range states {
		switch {
		case s.State == TaskStateDead && s.Failed:
			failed++
			dead++
		case s.State == TaskStateDead:
			dead++
		case s.State == TaskStateRunning:
			running++
		}
	}
	switch {
	case failed > 0 && dead == len(states):
		return AllocClientStatusFailed, "Failed tasks"
	case failed > 0:
		// Siblings are being stopped; report failure once they are dead,
		// but do not claim running meanwhile.
		if prev == AllocClientStatusRunning {
			return AllocClientStatusRunning, "Tasks are stopping after a task failed"
		}
		return AllocClientStatusPending, "Tasks are stopping after a task failed"
	case len(states) > 0 && dead == len(states):
		return AllocClientStatusComplete, "All tasks have completed"
	case running > 0 || prev == AllocClientStatusRunning:
		return AllocClientStatusRunning, "Tasks are running"
	}
	return AllocClientStatusPending, "No tasks have started"
}
