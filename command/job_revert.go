package command

import "strconv"

const jobRevertHelp = `
Usage: drover job revert [options] <job> <version>

  Register an earlier version of a job again, as a new version, and
  monitor its evaluation like "job run".

Revert Options:

  -detach    Return once the revert is submitted, printing the evaluation ID.
  -verbose   Show full IDs.
`

func jobRevert(m *Meta, args []string) int {
	c := m.cmdLine("job revert", jobRevertHelp, takes(2, "<job> <version>")).withVerbose()
	detach := c.Bool("detach", false, "")
	if code, ok := c.parse(args); !ok {
		return code
	}
	version, err := strconv.ParseUint(c.Arg(1), 10, 64)
	if err != nil {
		return m.errorf("The version must be a non-negative integer, not %q", c.Arg(1))
	}
	client, jobID, code, ok := c.clientFor(jobKind)
	if !ok {
		return code
	}
	resp, _, err := client.Jobs().Revert(jobID, version, nil, nil)
	if err != nil {
		return m.errorf("Error reverting job: %v", err)
	}
	if resp.EvalID == "" {
		// Periodic and parameterized jobs create no evaluation.
		return 0
	}
	if *detach {
		m.out("Evaluation ID: %s", resp.EvalID)
		return 0
	}
	return m.withInterrupt(func() int { return newMonitor(m, client, c.verbose).monitorEval(resp.EvalID) })
}
