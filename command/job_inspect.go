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
	fs := m.flagSet("job inspect", jobInspectHelp)
	version := fs.Uint64("version", 0, "")
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
	jobID, code, ok := m.resolveJob(client, fs.Arg(0), 1)
	if !ok {
		return code
	}
	var job *api.Job
	if flagWasSet(fs, "version") {
		versions, _, _, err := client.Jobs().Versions(jobID, false, nil)
		if err != nil {
			return m.errorf("Error retrieving job versions: %v", err)
		}
		for _, v := range versions {
			if ptrUint64(v.Version) == *version {
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
