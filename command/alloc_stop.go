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
	c := m.cmdLine("alloc stop", allocStopHelp, takes(1, "<allocation>")).withVerbose()
	detach := c.Bool("detach", false, "")
	client, allocID, code, ok := c.startFor(args, allocKind)
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
	mon := newMonitor(m, client, c.verbose)
	mon.noDeployment = true
	return m.withInterrupt(func() int { return mon.monitorEval(resp.EvalID) })
}
