package command

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

const serviceInfoHelp = `
Usage: drover service info [options] <service name>

  Show the registrations of a native (provider = "nomad") service: where
  each instance is, and which job, node and allocation registered it.

Info Options:

  -json     Print the registrations as JSON.
  -verbose  Show each registration in full: its ID, namespace, full node
            and allocation IDs and datacenter.
`

func serviceInfo(m *Meta, args []string) int {
	fs := m.flagSet("service info", serviceInfoHelp)
	asJSON := fs.Bool("json", false, "")
	verbose := fs.Bool("verbose", false, "")
	if code, ok := m.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return m.usageError(fs, "This command takes one argument: <service name>")
	}
	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
	}
	regs, _, err := client.Services().Get(fs.Arg(0), nil)
	if err != nil {
		return m.errorf("Error listing service registrations: %v", err)
	}
	if *asJSON {
		return m.printJSON(regs)
	}
	if len(regs) == 0 {
		m.out("No service registrations found")
		return 0
	}
	if *verbose {
		// One key = value block per registration, as Nomad's -verbose.
		for i, r := range regs {
			if i > 0 {
				fmt.Fprintln(m.stdout)
			}
			fmt.Fprint(m.stdout, keyValues([]string{
				"ID|" + r.ID, "Service Name|" + r.ServiceName, "Namespace|" + r.Namespace, "Job ID|" + r.JobID,
				"Alloc ID|" + r.AllocID, "Node ID|" + r.NodeID, "Datacenter|" + r.Datacenter,
				"Address|" + net.JoinHostPort(r.Address, strconv.Itoa(r.Port)), "Tags|[" + strings.Join(r.Tags, ",") + "]",
			}))
		}
		return 0
	}
	rows := []string{"Job ID|Address|Tags|Node ID|Alloc ID"}
	for _, r := range regs {
		addr := net.JoinHostPort(r.Address, strconv.Itoa(r.Port))
		rows = append(rows, fmt.Sprintf("%s|%s|[%s]|%s|%s", r.JobID, addr, strings.Join(r.Tags, ","),
			shortID(r.NodeID, false), shortID(r.AllocID, false)))
	}
	fmt.Fprint(m.stdout, columns(rows))
	return 0
}
