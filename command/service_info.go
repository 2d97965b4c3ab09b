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
	c := m.cmdLine("service info", serviceInfoHelp, takes(1, "<service name>")).withJSON().withVerbose()
	client, code, ok := c.start(args)
	if !ok {
		return code
	}
	regs, _, err := client.Services().Get(c.Arg(0), nil)
	if err != nil {
		return m.errorf("Error listing service registrations: %v", err)
	}
	return c.showList(regs, len(regs), "No service registrations found", func() string {
		if c.verbose {
			// One key = value block per registration, as Nomad's -verbose.
			blocks := make([]string, len(regs))
			for i, r := range regs {
				blocks[i] = keyValues([]string{
					"ID|" + r.ID, "Service Name|" + r.ServiceName, "Namespace|" + r.Namespace, "Job ID|" + r.JobID,
					"Alloc ID|" + r.AllocID, "Node ID|" + r.NodeID, "Datacenter|" + r.Datacenter,
					"Address|" + net.JoinHostPort(r.Address, strconv.Itoa(r.Port)), "Tags|[" + strings.Join(r.Tags, ",") + "]",
				})
			}
			return strings.Join(blocks, "\n")
		}
		rows := []string{"Job ID|Address|Tags|Node ID|Alloc ID"}
		for _, r := range regs {
			addr := net.JoinHostPort(r.Address, strconv.Itoa(r.Port))
			rows = append(rows, fmt.Sprintf("%s|%s|[%s]|%s|%s", r.JobID, addr, strings.Join(r.Tags, ","),
				shortID(r.NodeID, false), shortID(r.AllocID, false)))
		}
		return columns(rows)
	})
}
