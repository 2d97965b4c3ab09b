package command

import (
	"fmt"
	"strings"

	"github.com/drover-sched/drover/api"
)

const evalStatusHelp = `
Usage: drover eval status [options] <evaluation>

  Show an evaluation: what triggered it, how it ended, the allocations it
  placed, and, if it could not place everything, why. The evaluation may be
  given by an ID prefix.

Status Options:

  -json      Print the evaluation as JSON.
  -verbose   Show full IDs, absolute times and node scores.
`

func evalStatus(m *Meta, args []string) int {
	c := m.cmdLine("eval status", evalStatusHelp, takes(1, "<evaluation>")).withJSON().withVerbose()
	client, evalID, code, ok := c.startFor(args, evalKind)
	if !ok {
		return code
	}
	eval, _, err := client.Evaluations().Info(evalID, nil)
	if err != nil {
		return m.errorf("Error querying evaluation: %v", err)
	}
	if code, done := c.print(eval); done {
		return code
	}
	allocs, _, err := client.Evaluations().Allocations(evalID, nil)
	if err != nil && !api.IsNotFound(err) {
		return m.errorf("Error querying evaluation allocations: %v", err)
	}

	var b strings.Builder
	b.WriteString(keyValues(evalHeader(eval, m, c.verbose)))
	if len(eval.RelatedEvals) > 0 {
		rows := []string{"ID|Priority|Triggered By|Node ID|Status|Description"}
		for _, r := range eval.RelatedEvals {
			rows = append(rows, fmt.Sprintf("%s|%d|%s|%s|%s|%s", shortID(r.ID, c.verbose), r.Priority, r.TriggeredBy,
				orNone(shortID(r.NodeID, c.verbose)), r.Status, r.StatusDescription))
		}
		section(&b, "Related Evaluations", columns(rows))
	}
	if len(allocs) > 0 {
		section(&b, "Placed Allocations", allocTable(allocs, m.now(), c.verbose))
	}
	if len(eval.FailedTGAllocs) > 0 {
		section(&b, "Failed Placements", formatFailedPlacements(eval.FailedTGAllocs, "", c.verbose))
		if eval.BlockedEval != "" {
			fmt.Fprintf(&b, "\nEvaluation %q waiting for additional capacity to place remainder\n", shortID(eval.BlockedEval, c.verbose))
		}
	}
	fmt.Fprint(m.stdout, b.String())
	return 0
}

func evalHeader(e *api.Evaluation, m *Meta, verbose bool) []string {
	created, modified := relUnixNano(e.CreateTime, m.now()), relUnixNano(e.ModifyTime, m.now())
	if verbose {
		created, modified = formatUnixNano(e.CreateTime), formatUnixNano(e.ModifyTime)
	}
	rows := []string{
		"ID|" + shortID(e.ID, verbose),
		"Create Time|" + created,
		"Modify Time|" + modified,
		"Status|" + e.Status,
		"Status Description|" + orNone(e.StatusDescription),
		"Type|" + e.Type,
		"TriggeredBy|" + e.TriggeredBy,
	}
	if e.JobID != "" {
		rows = append(rows, "Job ID|"+e.JobID)
	}
	if e.NodeID != "" {
		rows = append(rows, "Node ID|"+shortID(e.NodeID, verbose))
	}
	if e.DeploymentID != "" {
		rows = append(rows, "Deployment ID|"+shortID(e.DeploymentID, verbose))
	}
	rows = append(rows,
		"Namespace|"+e.Namespace,
		fmt.Sprintf("Priority|%d", e.Priority),
		fmt.Sprintf("Placement Failures|%t", len(e.FailedTGAllocs) > 0),
	)
	if !e.WaitUntil.IsZero() {
		rows = append(rows, "Wait Until|"+formatTime(e.WaitUntil)+" ("+relTime(e.WaitUntil, m.now())+")")
	}
	for _, r := range []struct{ name, id string }{{"Previous Eval", e.PreviousEval}, {"Next Eval", e.NextEval}, {"Blocked Eval", e.BlockedEval}} {
		rows = append(rows, r.name+"|"+orNone(shortID(r.id, verbose)))
	}
	return rows
}
