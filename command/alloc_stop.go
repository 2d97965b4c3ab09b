package command

const allocStopHelp = `
Usage: drover alloc stop [options] <allocation>

  Stop an allocation. The scheduler places a replacement, as it would for
  a failed one; use "job stop" to stop a job for good. The evaluation that
  places the replacement is monitored.

Stop Options:

  -detach    Return once the stop is submitted, printing the evaluation ID.
  -verbose   Show full IDs.
`

func allocStop(m *Meta, args []string) int {
	fs := m.flagSet("alloc stop", allocStopHelp)
	detach := fs.Bool("detach", false, "")
	verbose := fs.Bool("verbose", false, "")
	if code, ok := m.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return m.usageError(fs, "This command takes one argument: <allocation>")
	}
	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
	}
	allocID, code, ok := m.resolveAlloc(client, fs.Arg(0), *verbose)
	if !ok {
		return code
	}
	resp, err := client.Allocations().Stop(allocID, nil)
	if err != nil {
		return m.errorf("Error stopping allocation: %v", err)
	}
	if resp.EvalID == "" {
		return 0
	}
	if *detach {
		m.out("%s", resp.EvalID)
		return 0
	}
	mon := newMonitor(m, client, *verbose)
	mon.noDeployment = true
	return m.withInterrupt(func() int { return mon.monitorEval(resp.EvalID) })
}
