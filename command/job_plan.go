package command

import (
	"fmt"
	"strings"

	"github.com/drover-sched/drover/api"
)

const jobPlanHelp = `
Usage: drover job plan [options] <path>

  Dry-run a job file: show how it differs from the running version and
  what the scheduler would do (place, update in place or destructively,
  stop), without changing anything. Ends with the "job run -check-index"
  command that submits exactly what was planned.

  Exit codes, as Nomad's: 0 when no allocations would be created or
  destroyed, 1 when some would be, 255 on error.

Plan Options:

  -diff
    Show the diff against the running version. Default: true.

  -policy-override
    Override soft-mandatory policy failures.

  -verbose
    Show unchanged fields as well, and node scores.
` + jobFileFlagsHelp

// exitPlanError is job plan's error code; 1 already means "changes".
const exitPlanError = 255

func jobPlan(m *Meta, args []string) int {
	c := m.cmdLine("job plan", jobPlanHelp, takes(1, "<path>")).withVerbose()
	var files jobFileFlags
	files.register(c.FlagSet)
	diff := c.Bool("diff", true, "")
	c.Bool("policy-override", false, "")
	if code, ok := c.parse(args); !ok {
		if code != 0 {
			return exitPlanError
		}
		return code
	}
	path := c.Arg(0)
	job, err := m.parseJobFile(path, &files)
	if err != nil {
		m.errorf("Error parsing job file %s:\n%v", path, err)
		return exitPlanError
	}
	m.useJobNamespace(job)
	client, _, ok := c.client()
	if !ok {
		return exitPlanError
	}
	resp, _, err := client.Jobs().Plan(job, *diff, nil)
	if err != nil {
		m.errorf("Error during plan: %v", err)
		return exitPlanError
	}

	if *diff && resp.Diff != nil {
		m.out("%s", formatJobDiff(resp.Diff, c.verbose))
	}
	m.out("%s", formatDryRun(resp, m, c.verbose))
	if resp.Warnings != "" {
		m.out("Job Warnings:\n%s\n", strings.TrimSpace(resp.Warnings))
	}
	m.out("%s", checkIndexHint(resp.JobModifyIndex, path))
	return planExitCode(resp)
}

// formatDryRun is the "Scheduler dry-run:" section.
func formatDryRun(resp *api.JobPlanResponse, m *Meta, verbose bool) string {
	var b strings.Builder
	b.WriteString("Scheduler dry-run:\n")
	if len(resp.FailedTGAllocs) == 0 {
		b.WriteString("- All tasks successfully allocated.\n")
	} else {
		b.WriteString("- WARNING: Failed to place all allocations.\n")
		b.WriteString(formatFailedPlacements(resp.FailedTGAllocs, "  ", verbose))
	}
	if t := resp.NextPeriodicLaunch.Time; !t.IsZero() {
		fmt.Fprintf(&b, "- If submitted now, the next periodic launch would be at %s (%s).\n", formatTime(t), relTime(t, m.now()))
	}
	if resp.Annotations != nil && len(resp.Annotations.PreemptedAllocs) > 0 {
		fmt.Fprintf(&b, "- Would preempt %s:\n", plural(len(resp.Annotations.PreemptedAllocs), "allocation"))
		b.WriteString(indent(allocTable(resp.Annotations.PreemptedAllocs, m.now(), verbose), "  "))
		b.WriteString("\n")
	}
	return b.String()
}

func checkIndexHint(index uint64, path string) string {
	return fmt.Sprintf(`Job Modify Index: %d
To submit the job with version verification run:

drover job run -check-index %d %s

With -check-index the job is registered only if its modify index on the
servers still matches. If another submission changed the job since this
plan, the run is refused instead of overwriting that change unseen.`, index, index, path)
}

// planExitCode is 1 when the plan would create or destroy allocations (a
// place, stop, migration, destructive update or canary), else 0. In-place
// updates and ignored allocations do not count: nothing restarts.
func planExitCode(resp *api.JobPlanResponse) int {
	if resp.Annotations == nil {
		return 0
	}
	for _, u := range resp.Annotations.DesiredTGUpdates {
		if u == nil {
			continue
		}
		if u.Place+u.Stop+u.Migrate+u.DestructiveUpdate+u.Canary > 0 {
			return 1
		}
	}
	return 0
}
