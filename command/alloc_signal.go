package command

import (
	"github.com/drover-sched/drover/api"
)

const allocSignalHelp = `
Usage: drover alloc signal [options] <allocation> [task]

  Send a signal to a task of a running allocation, or to every running
  task when none is named. The task is not stopped by Drover; what the
  signal does is up to the task (SIGHUP often reloads a configuration).

Signal Options:

  -s=<signal>   The signal to send, such as SIGHUP, SIGUSR1 or TERM.
                Defaults to SIGKILL, as in Nomad.
  -task=<name>  The task to signal; wins over the task argument.
  -verbose      Show full IDs.
`

func allocSignal(m *Meta, args []string) int {
	c := m.cmdLine("alloc signal", allocSignalHelp, takesUpTo(1, 2, "<allocation> [task]")).withVerbose()
	signal := c.String("s", "SIGKILL", "")
	taskFlag := c.String("task", "", "")
	if code, ok := c.parse(args); !ok {
		return code
	}
	if *signal == "" {
		return c.usageError("-s must name a signal")
	}
	task := c.Arg(1)
	if *taskFlag != "" {
		task = *taskFlag
	}
	client, allocID, code, ok := c.clientForTask(task)
	if !ok {
		return code
	}
	if err := client.Allocations().Signal(allocID, task, *signal, nil); err != nil {
		return m.errorf("Error signalling allocation: %v", err)
	}
	return 0
}

// clientForTask is clientFor(allocKind) for a verb that acts on a task: the
// task, if named, must be one of the allocation's.
func (c *cmdLine) clientForTask(task string) (*api.Client, string, int, bool) {
	client, allocID, code, ok := c.clientFor(allocKind)
	if !ok || task == "" {
		return client, allocID, code, ok
	}
	alloc, _, err := client.Allocations().Info(allocID, nil)
	if err != nil {
		return nil, "", c.m.errorf("Error querying allocation: %v", err), false
	}
	if _, err := pickTask(alloc, task); err != nil {
		return nil, "", c.m.errorf("%v", err), false
	}
	return client, allocID, 0, true
}
