package command

import "fmt"

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
	fs := m.flagSet("eval list", evalListHelp)
	job := fs.String("job", "", "")
	status := fs.String("status", "", "")
	asJSON := fs.Bool("json", false, "")
	verbose := fs.Bool("verbose", false, "")
	if code, ok := m.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 0 {
		return m.usageError(fs, "This command takes no arguments")
	}
	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
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
	if *asJSON {
		return m.printJSON(filtered)
	}
	if len(filtered) == 0 {
		m.out("No evaluations found")
		return 0
	}
	fmt.Fprint(m.stdout, evalTable(filtered, *verbose))
	return 0
}
