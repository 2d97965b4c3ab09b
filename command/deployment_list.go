package command

import (
	"fmt"

	"github.com/drover-sched/drover/api"
)

const deploymentListHelp = `
Usage: drover deployment list [options]

  List deployments, newest first.

List Options:

  -json      Print the deployments as JSON.
  -verbose   Show full IDs.
`

func deploymentList(m *Meta, args []string) int {
	c := m.cmdLine("deployment list", deploymentListHelp, noArgs).withJSON().withVerbose()
	client, code, ok := c.start(args)
	if !ok {
		return code
	}
	ds, _, err := client.Deployments().List(nil)
	if err != nil {
		return m.errorf("Error retrieving deployments: %v", err)
	}
	return c.showList(ds, len(ds), "No deployments found", func() string { return deploymentListTable(ds, c.verbose) })
}

// deploymentListTable is Nomad's deployment list: one row a deployment.
func deploymentListTable(ds []*api.Deployment, verbose bool) string {
	rows := []string{"ID|Job ID|Job Version|Status|Description"}
	for _, d := range ds {
		rows = append(rows, fmt.Sprintf("%s|%s|%d|%s|%s", shortID(d.ID, verbose), d.JobID, d.JobVersion, d.Status, d.StatusDescription))
	}
	return columns(rows)
}
