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
	fs := m.flagSet("deployment list", deploymentListHelp)
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
	ds, _, err := client.Deployments().List(nil)
	if err != nil {
		return m.errorf("Error retrieving deployments: %v", err)
	}
	if *asJSON {
		return m.printJSON(ds)
	}
	if len(ds) == 0 {
		m.out("No deployments found")
		return 0
	}
	fmt.Fprint(m.stdout, deploymentListTable(ds, *verbose))
	return 0
}

// deploymentListTable is Nomad's deployment list: one row a deployment.
func deploymentListTable(ds []*api.Deployment, verbose bool) string {
	rows := []string{"ID|Job ID|Job Version|Status|Description"}
	for _, d := range ds {
		rows = append(rows, fmt.Sprintf("%s|%s|%d|%s|%s", shortID(d.ID, verbose), d.JobID, d.JobVersion, d.Status, d.StatusDescription))
	}
	return columns(rows)
}
