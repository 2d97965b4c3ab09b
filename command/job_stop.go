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
	fs := m.flagSet("job stop", jobStopHelp)
	detach := fs.Bool("detach", false, "")
	purge := fs.Bool("purge", false, "")
	yes := fs.Bool("yes", false, "")
	verbose := fs.Bool("verbose", false, "")
	if code, ok := m.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return m.usageError(fs, "This command takes one argument: <job>")
	}
	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
	}
	given := fs.Arg(0)
	jobID, code, ok := m.resolveJob(client, given, 1)
	if !ok {
		return code
	}
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
	mon := newMonitor(m, client, *verbose)
	mon.noDeployment = true
	return m.withInterrupt(func() int { return mon.monitorEval(evalID) })
}
