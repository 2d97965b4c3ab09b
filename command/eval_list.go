package command

const evalListHelp = `
Usage: drover eval list [options]

  List evaluations, newest first.

List Options:

  -job=<id>         Only evaluations of this job.
  -status=<status>  Only evaluations in this status (pending, blocked,
                    complete, failed, canceled).
  -json             Print the evaluations as JSON.
  -verbose          Show full IDs.
`

func evalList(m *Meta, args []string) int {
	c := m.cmdLine("eval list", evalListHelp, noArgs).withJSON().withVerbose()
	job := c.String("job", "", "")
	status := c.String("status", "", "")
	client, code, ok := c.start(args)
	if !ok {
		return code
	}
	evals, _, err := client.Evaluations().List(nil)
	if err != nil {
		return m.errorf("Error querying evaluations: %v", err)
	}
	// Filtered here rather than by the agent, so the flags work whatever
	// filtering the agent supports.
	filtered := evals[:0:0]
	for _, e := range evals {
		if (*job == "" || e.JobID == *job) && (*status == "" || e.Status == *status) {
			filtered = append(filtered, e)
		}
	}
	return c.showList(filtered, len(filtered), "No evaluations found", func() string { return evalTable(filtered, c.verbose) })
}
