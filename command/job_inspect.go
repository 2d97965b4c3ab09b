package command

import "github.com/drover-sched/drover/api"

const jobInspectHelp = `
Usage: drover job inspect [options] <job>

  Print a job's definition as the JSON the HTTP API takes, {"Job": {...}},
  so the output can be edited and submitted again with "job run".

Inspect Options:

  -version=<n>   Print version n instead of the current one.
`

func jobInspect(m *Meta, args []string) int {
	c := m.cmdLine("job inspect", jobInspectHelp, takes(1, "<job>"))
	version := c.Uint64("version", 0, "")
	client, jobID, code, ok := c.startFor(args, jobKind)
	if !ok {
		return code
	}
	var job *api.Job
	var err error
	if c.flagWasSet("version") {
		versions, _, _, err := client.Jobs().Versions(jobID, false, nil)
		if err != nil {
			return m.errorf("Error retrieving job versions: %v", err)
		}
		for _, v := range versions {
			if deref(v.Version) == *version {
				job = v
			}
		}
		if job == nil {
			return m.errorf("Job %q has no version %d", jobID, *version)
		}
	} else if job, _, err = client.Jobs().Info(jobID, nil); err != nil {
		return m.errorf("Error inspecting job: %v", err)
	}
	return m.printJSON(map[string]*api.Job{"Job": job})
}
