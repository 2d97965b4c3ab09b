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
	fs := m.flagSet("alloc restart", allocRestartHelp)
	taskFlag := fs.String("task", "", "")
	all := fs.Bool("all-tasks", false, "")
	verbose := fs.Bool("verbose", false, "")
	if code, ok := m.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return m.usageError(fs, "This command takes one or two arguments: <allocation> [task]")
	}
	task := fs.Arg(1)
	if *taskFlag != "" {
		task = *taskFlag
	}
	if *all && task != "" {
		return m.usageError(fs, "-all-tasks restarts every task; do not also name one")
	}
	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
	}
	allocID, task, code, ok := m.resolveAllocTask(client, fs.Arg(0), task, *verbose)
	if !ok {
		return code
	}
	if err := client.Allocations().Restart(allocID, task, nil); err != nil {
		return m.errorf("Error restarting allocation: %v", err)
	}
	if task == "" {
		m.out("Restarted the running tasks of allocation %q", shortID(allocID, *verbose))
	} else {
		m.out("Restarted task %q of allocation %q", task, shortID(allocID, *verbose))
	}
	return 0
}
