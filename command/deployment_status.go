package command

import (
	"fmt"
	"strings"
	"time"

	"github.com/drover-sched/drover/api"
)

const deploymentStatusHelp = `
Usage: drover deployment status [options] <deployment>

  Show a deployment's status and the progress of each task group. The
  deployment may be given by an ID prefix.

Status Options:

  -json      Print the deployment as JSON.
  -monitor   Follow the deployment until it ends, printing its progress
             as "job run" does; exits non-zero if it fails.
  -verbose   Show full IDs.
`

func deploymentStatus(m *Meta, args []string) int {
	c := m.cmdLine("deployment status", deploymentStatusHelp, takes(1, "<deployment>")).withJSON().withVerbose()
	follow := c.Bool("monitor", false, "")
	client, id, code, ok := c.startFor(args, deploymentKind)
	if !ok {
		return code
	}
	if *follow {
		if c.out.json {
			return c.usageError("-monitor and -json cannot be used together")
		}
		return m.withInterrupt(func() int { return newMonitor(m, client, c.verbose).monitorDeployment(id) })
	}
	d, _, err := client.Deployments().Info(id, nil)
	if err != nil {
		return m.errorf("Error reading deployment: %v", err)
	}
	return c.show(d, func() string { return formatDeployment(d, m.now(), c.verbose) + "\n" })
}

// formatDeployment is the header and per-group table shared by
// `deployment status` and `job status`.
func formatDeployment(d *api.Deployment, now time.Time, verbose bool) string {
	var b strings.Builder
	b.WriteString(keyValues([]string{
		"ID|" + shortID(d.ID, verbose),
		"Job ID|" + d.JobID,
		fmt.Sprintf("Job Version|%d", d.JobVersion),
		"Status|" + d.Status,
		"Description|" + orNone(d.StatusDescription),
	}))
	if len(d.TaskGroups) > 0 {
		b.WriteString("\nDeployed\n")
		b.WriteString(deploymentTable(d, now))
	}
	return strings.TrimRight(b.String(), "\n")
}

// deploymentTable has one row per group. Canary and auto-revert columns
// appear only when some group uses them, to keep the common case narrow.
// With a zero now, deadlines are shown without "(in 5m)", so that a
// monitor can tell a real change from the passing of time.
func deploymentTable(d *api.Deployment, now time.Time) string {
	var canaries, autoRevert bool
	for _, s := range d.TaskGroups {
		canaries = canaries || s.DesiredCanaries > 0
		autoRevert = autoRevert || s.AutoRevert
	}
	header := "Task Group"
	if autoRevert {
		header += "|Auto Revert"
	}
	if canaries {
		header += "|Promoted"
	}
	header += "|Desired"
	if canaries {
		header += "|Canaries"
	}
	header += "|Placed|Healthy|Unhealthy|Progress Deadline"
	rows := []string{header}
	for _, tg := range sortedKeys(d.TaskGroups) {
		s := d.TaskGroups[tg]
		row := tg
		if autoRevert {
			row += fmt.Sprintf("|%t", s.AutoRevert)
		}
		if canaries {
			promoted := "N/A"
			if s.DesiredCanaries > 0 {
				promoted = fmt.Sprint(s.Promoted)
			}
			row += "|" + promoted
		}
		row += fmt.Sprintf("|%d", s.DesiredTotal)
		if canaries {
			row += fmt.Sprintf("|%d", s.DesiredCanaries)
		}
		deadline := "N/A"
		if !s.RequireProgressBy.IsZero() {
			deadline = formatTime(s.RequireProgressBy)
			if !now.IsZero() {
				deadline += " (" + relTime(s.RequireProgressBy, now) + ")"
			}
		}
		row += fmt.Sprintf("|%d|%d|%d|%s", s.PlacedAllocs, s.HealthyAllocs, s.UnhealthyAllocs, deadline)
		rows = append(rows, row)
	}
	return columns(rows)
}
