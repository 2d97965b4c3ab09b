package command

const jobStopHelp = `
Usage: drover job stop [options] <job>

  Stop a job: its allocations are stopped and not replaced. The job stays
  known (and "job status" shows it as dead) until garbage collection, or
  until -purge removes it once its allocations have stopped. The job may be
  given by an ID prefix; stopping by prefix asks for confirmation.

Stop Options:

  -detach    Return once the stop is submitted, printing the evaluation ID.
  -purge     Remove the job from the servers as well.
  -yes       Do not ask for confirmation.
  -verbose   Show full IDs.
`

func jobStop(m *Meta, args []string) int {
	c := m.cmdLine("job stop", jobStopHelp, takes(1, "<job>")).withVerbose()
	detach := c.Bool("detach", false, "")
	purge := c.Bool("purge", false, "")
	yes := c.Bool("yes", false, "")
	client, jobID, code, ok := c.startFor(args, jobKind)
	if !ok {
		return code
	}
	given := c.Arg(0)
	// A prefix could name a job the user did not mean; make them see the
	// full ID before it is stopped.
	if jobID != given && !*yes && !m.confirm(`Are you sure you want to stop job "`+jobID+`"?`) {
		m.out("Cancelling job stop")
		return 0
	}
	evalID, _, err := client.Jobs().Deregister(jobID, *purge, nil)
	if err != nil {
		return m.errorf("Error deregistering job: %v", err)
	}
	if evalID == "" {
		// Nothing to stop, e.g. a purge of a job without allocations.
		return 0
	}
	if *detach {
		m.out("%s", evalID)
		return 0
	}
	mon := newMonitor(m, client, c.verbose)
	mon.noDeployment = true
	return m.withInterrupt(func() int { return mon.monitorEval(evalID) })
}
