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
  -verbose  Show full IDs, the datacenter and the raft indexes.
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
	header := "Job ID|Address|Tags|Node ID|Alloc ID"
	if *verbose {
		header = "ID|Job ID|Address|Tags|Datacenter|Node ID|Alloc ID|Create Index|Modify Index"
	}
	rows := []string{header}
	for _, r := range regs {
		addr := net.JoinHostPort(r.Address, strconv.Itoa(r.Port))
		tags := "[" + strings.Join(r.Tags, ",") + "]"
		if *verbose {
			rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s|%d|%d", r.ID, r.JobID, addr, tags, r.Datacenter,
				r.NodeID, r.AllocID, r.CreateIndex, r.ModifyIndex))
		} else {
			rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%s", r.JobID, addr, tags, shortID(r.NodeID, false), shortID(r.AllocID, false)))
		}
	}
	fmt.Fprint(m.stdout, columns(rows))
	return 0
}
