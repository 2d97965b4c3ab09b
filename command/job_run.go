package command

import (
	"errors"
	"strings"

	"github.com/drover-sched/drover/api"
)

const jobRunHelp = `
Usage: drover job run [options] <path>

  Submit a job file (HCL, HCL's JSON syntax, or API JSON; "-" reads standard
  input) and monitor its evaluation: the allocations it places, why any
  could not be placed, and the deployment it starts. The file is parsed
  here, so errors are reported before anything is sent.

  Exit codes: 0 when the job was placed, 2 when some allocations could not
  be placed (the job is registered and waits for capacity), 1 on any error.

Run Options:

  -check-index=<index>
    Register the job only if its modify index on the servers is still
    <index>, as printed by "job plan". 0 means the job must not exist yet.

  -detach
    Return once the job is submitted, printing the evaluation ID.

  -output
    Print the JSON that would be submitted, and submit nothing.

  -preserve-counts
    Keep the group counts of the running version.

  -verbose
    Show full IDs and node scores.
` + jobFileFlagsHelp

func jobRun(m *Meta, args []string) int {
	c := m.cmdLine("job run", jobRunHelp, takes(1, "<path>")).withVerbose()
	var files jobFileFlags
	files.register(c.FlagSet)
	checkIndex := c.Uint64("check-index", 0, "")
	detach := c.Bool("detach", false, "")
	output := c.Bool("output", false, "")
	preserveCounts := c.Bool("preserve-counts", false, "")
	if code, ok := c.parse(args); !ok {
		return code
	}
	enforce := c.flagWasSet("check-index")

	path := c.Arg(0)
	job, err := m.parseJobFile(path, &files)
	if err != nil {
		return m.errorf("Error parsing job file %s:\n%v", path, err)
	}
	if *output {
		return m.printJSON(map[string]any{"Job": job})
	}
	m.useJobNamespace(job)
	client, code, ok := c.client()
	if !ok {
		return code
	}

	opts := &api.RegisterOptions{PreserveCounts: *preserveCounts}
	if enforce {
		opts.EnforceIndex, opts.ModifyIndex = true, *checkIndex
	}
	resp, _, err := client.Jobs().RegisterOpts(job, opts, nil)
	if err != nil {
		if enforce && isIndexConflict(err) {
			m.errorf("%s", serverMessage(err))
			return m.errorf("Job not updated")
		}
		return m.errorf("Error submitting job: %v", err)
	}
	if resp.Warnings != "" {
		m.out("Job Warnings:\n%s\n", strings.TrimSpace(resp.Warnings))
	}

	// Periodic and parameterized jobs create no evaluation on register:
	// they run when launched or dispatched.
	if resp.EvalID == "" || job.IsPeriodic() || job.IsParameterized() {
		m.out("Job registration successful")
		return exitOK
	}
	if *detach {
		m.out("Job registration successful")
		m.out("Evaluation ID: %s", resp.EvalID)
		return exitOK
	}
	return m.withInterrupt(func() int {
		return newMonitor(m, client, c.verbose).monitorEval(resp.EvalID)
	})
}

// isIndexConflict reports whether a register failed its -check-index: the
// agent answers 409, or (older agents) 400/500 naming the modify index.
func isIndexConflict(err error) bool {
	if api.HasStatusCode(err, 409) {
		return true
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "modify index") || strings.Contains(msg, "enforcing job modify index")
}

// serverMessage is the agent's own explanation from an error response,
// without the "Unexpected response code" wrapping.
func serverMessage(err error) string {
	var ure *api.UnexpectedResponseError
	if errors.As(err, &ure) && ure.Body != "" {
		return ure.Body
	}
	return err.Error()
}
