package command

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/drover-sched/drover/api"
)

const jobScaleHelp = `
Usage: drover job scale [options] <job> [<group>] <count>

  Change the count of a job's task group, and monitor the evaluation that
  places or stops allocations like "job run". The group may be left out
  when the job has only one. The count must lie within the group's
  scaling block, if it has one. Each request is recorded as a scaling
  event (see "job scaling-events").

Scale Options:

  -detach    Return once the request is submitted, printing the evaluation ID.
  -verbose   Show full IDs.
`

// scaleMessage is the message of the scaling events the CLI records.
const scaleMessage = "submitted using the Drover CLI"

func jobScale(m *Meta, args []string) int {
	c := m.cmdLine("job scale", jobScaleHelp, takesUpTo(2, 3, "<job> [<group>] <count>")).withVerbose()
	detach := c.Bool("detach", false, "")
	if code, ok := c.parse(args); !ok {
		return code
	}
	countArg := c.Arg(c.NArg() - 1)
	count, err := strconv.Atoi(countArg)
	if err != nil || count < 0 {
		return m.errorf("The count must be a non-negative integer, not %q", countArg)
	}
	group := ""
	if c.NArg() == 3 {
		group = c.Arg(1)
	}
	client, jobID, code, ok := c.clientFor(jobKind)
	if !ok {
		return code
	}
	status, _, err := client.Jobs().ScaleStatus(jobID, nil)
	if err != nil {
		return m.errorf("Error querying job %q: %v", jobID, err)
	}
	group, problem := pickScaleGroup(jobID, status.TaskGroups, group)
	if problem != "" {
		return m.errorf("%s", problem)
	}
	resp, _, err := client.Jobs().Scale(jobID, group, &count, scaleMessage, false, nil, nil)
	if err != nil {
		return m.errorf("Error submitting scaling request: %v", err)
	}
	if resp.Warnings != "" {
		m.out("Job Warnings:\n%s\n", resp.Warnings)
	}
	if resp.EvalID == "" {
		// Periodic and parameterized jobs create no evaluation: the new
		// count applies to the jobs they launch from now on.
		m.out("Job %q group %q scaled to %d; the job is periodic or parameterized, so no evaluation was created", jobID, group, count)
		return 0
	}
	if *detach {
		m.out("Evaluation ID: %s", resp.EvalID)
		return 0
	}
	return m.withInterrupt(func() int { return newMonitor(m, client, c.verbose).monitorEval(resp.EvalID) })
}

// pickScaleGroup returns the group to scale: the one named, which must
// exist, or the job's only group when none is named. Otherwise it says
// what is wrong, in Nomad's words followed by the job's groups.
func pickScaleGroup(jobID string, groups map[string]api.TaskGroupScaleStatus, group string) (string, string) {
	names := make([]string, 0, len(groups))
	for name := range groups {
		names = append(names, name)
	}
	sort.Strings(names)
	if group == "" {
		if len(names) == 1 {
			return names[0], ""
		}
		return "", fmt.Sprintf("Group name required: job %q has %d groups (%s); run drover job scale %s <group> <count>",
			jobID, len(names), strings.Join(names, ", "), jobID)
	}
	if _, ok := groups[group]; !ok {
		return "", fmt.Sprintf("Group %q not found within job %q (its groups: %s)", group, jobID, strings.Join(names, ", "))
	}
	return group, ""
}
