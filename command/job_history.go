package command

import (
	"fmt"
	"strings"

	"github.com/drover-sched/drover/api"
)

const jobHistoryHelp = `
Usage: drover job history [options] <job>

  List a job's versions, newest first. With -p, show what each version
  changed; with -version, show only that version.

History Options:

  -p             Show the diff of each version against the one before.
  -full          Show each version's full definition as JSON.
  -version=<n>   Show only version n.
  -json          Print the versions as JSON.
`

func jobHistory(m *Meta, args []string) int {
	c := m.cmdLine("job history", jobHistoryHelp, takes(1, "<job>")).withJSON()
	diffs := c.Bool("p", false, "")
	full := c.Bool("full", false, "")
	onlyVersion := c.Uint64("version", 0, "")
	if code, ok := c.parse(args); !ok {
		return code
	}
	if *diffs && *full {
		return c.usageError("-p and -full cannot be used together")
	}
	client, jobID, code, ok := c.clientFor(jobKind)
	if !ok {
		return code
	}
	versions, jobDiffs, _, err := client.Jobs().Versions(jobID, *diffs, nil)
	if err != nil {
		return m.errorf("Error retrieving job versions: %v", err)
	}
	if c.flagWasSet("version") {
		for i, v := range versions {
			if deref(v.Version) == *onlyVersion {
				versions = versions[i : i+1]
				if i < len(jobDiffs) {
					jobDiffs = jobDiffs[i : i+1]
				} else {
					jobDiffs = nil
				}
				break
			}
			if i == len(versions)-1 {
				return m.errorf("Job %q has no version %d", jobID, *onlyVersion)
			}
		}
	}
	return c.show(versions, func() string {
		var blocks []string
		for i, v := range versions {
			var d *api.JobDiff
			if *diffs && i < len(jobDiffs) && i < len(versions)-1 {
				d = jobDiffs[i]
			}
			blocks = append(blocks, formatVersion(m, v, d, *full))
		}
		return strings.Join(blocks, "\n")
	})
}

func formatVersion(m *Meta, v *api.Job, d *api.JobDiff, full bool) string {
	rows := []string{
		fmt.Sprintf("Version|%d", deref(v.Version)),
		fmt.Sprintf("Stable|%t", deref(v.Stable)),
	}
	if v.SubmitTime != nil {
		rows = append(rows, "Submit Date|"+formatUnixNano(*v.SubmitTime))
	}
	out := keyValues(rows)
	if d != nil {
		out += "Diff =\n" + formatJobDiff(d, false)
	}
	if full {
		var b strings.Builder
		saved := m.stdout
		m.stdout = &b
		m.printJSON(v)
		m.stdout = saved
		out += b.String()
	}
	return strings.TrimRight(out, "\n") + "\n"
}
