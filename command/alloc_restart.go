package command

const allocRestartHelp = `
Usage: drover alloc restart [options] <allocation> [task]

  Restart a task of a running allocation in place, or every running task
  when none is named. Each task is stopped with its kill signal and started
  again at once on the same node; the restart does not count against the
  task's restart policy. The command returns once the old processes have
  exited.

Restart Options:

  -task=<name>  The task to restart; wins over the task argument.
  -all-tasks    Restart every running task (the same as naming none).
  -verbose      Show full IDs.
`

func allocRestart(m *Meta, args []string) int {
	c := m.cmdLine("alloc restart", allocRestartHelp, takesUpTo(1, 2, "<allocation> [task]")).withVerbose()
	taskFlag := c.String("task", "", "")
	all := c.Bool("all-tasks", false, "")
	if code, ok := c.parse(args); !ok {
		return code
	}
	task := c.Arg(1)
	if *taskFlag != "" {
		task = *taskFlag
	}
	if *all && task != "" {
		return c.usageError("-all-tasks restarts every task; do not also name one")
	}
	client, allocID, code, ok := c.clientForTask(task)
	if !ok {
		return code
	}
	if err := client.Allocations().Restart(allocID, task, nil); err != nil {
		return m.errorf("Error restarting allocation: %v", err)
	}
	if task == "" {
		m.out("Restarted the running tasks of allocation %q", shortID(allocID, c.verbose))
	} else {
		m.out("Restarted task %q of allocation %q", task, shortID(allocID, c.verbose))
	}
	return 0
}
