package command

import (
	"fmt"
	"sort"
	"strings"

	"github.com/drover-sched/drover/api"
)

const nodeStatusHelp = `
Usage: drover node status [options] [node]

  Without a node, list all nodes. With a node ID or prefix, show the node:
  its status and drain, recent events, the resources its allocations hold,
  and the allocations themselves.

Status Options:

  -json      Print the result as JSON.
  -verbose   Show full IDs, node attributes and meta.
`

func nodeStatus(m *Meta, args []string) int {
	c := m.cmdLine("node status", nodeStatusHelp, takesUpTo(0, 1, "[node]")).withJSON().withVerbose()
	client, code, ok := c.start(args)
	if !ok {
		return code
	}
	if c.NArg() == 0 {
		nodes, _, err := client.Nodes().List(nil)
		if err != nil {
			return m.errorf("Error querying node status: %v", err)
		}
		return c.showList(nodes, len(nodes), "No nodes registered", func() string { return nodeTable(nodes, c.verbose) })
	}
	nodeID, code, ok := c.resolve(client, nodeKind, c.Arg(0))
	if !ok {
		return code
	}
	return showNode(c, client, nodeID, c.verbose)
}

func showNode(c *cmdLine, client *api.Client, nodeID string, verbose bool) int {
	m := c.m
	node, _, err := client.Nodes().Info(nodeID, nil)
	if err != nil {
		return m.errorf("Error querying node: %v", err)
	}
	allocs, _, err := client.Nodes().Allocations(nodeID, nil)
	if err != nil {
		return m.errorf("Error querying node allocations: %v", err)
	}
	if code, done := c.print(struct {
		Node        *api.Node
		Allocations []*api.Allocation
	}{node, allocs}); done {
		return code
	}
	var b strings.Builder
	b.WriteString(keyValues(nodeHeader(node, m, verbose)))
	section(&b, "Node Events", nodeEvents(node, m, verbose))
	section(&b, "Allocated Resources", allocatedResources(node, allocs))
	if verbose {
		section(&b, "Attributes", mapKeyValues(node.Attributes))
		section(&b, "Meta", mapKeyValues(node.Meta))
		section(&b, "Host Volumes", nodeHostVolumes(node))
		section(&b, "Host Networks", nodeHostNetworks(node))
	}
	if len(allocs) == 0 {
		b.WriteString("\nAllocations\nNo allocations placed\n")
	} else {
		section(&b, "Allocations", allocTable(allocStubs(allocs), m.now(), verbose))
	}
	fmt.Fprint(m.stdout, b.String())
	return 0
}

func nodeHeader(n *api.Node, m *Meta, verbose bool) []string {
	drain := "false"
	if d := n.DrainStrategy; d != nil {
		switch {
		case d.Deadline < 0:
			drain = "true; force drain"
		case d.ForceDeadline.IsZero():
			drain = "true; no deadline"
		default:
			drain = fmt.Sprintf("true; %s deadline (%s)", formatTime(d.ForceDeadline), relTime(d.ForceDeadline, m.now()))
		}
		if d.IgnoreSystemJobs {
			drain += "; ignoring system jobs"
		}
	}
	var drivers []string
	for _, name := range sortedKeys(n.Drivers) {
		if d := n.Drivers[name]; d != nil && d.Detected && d.Healthy {
			drivers = append(drivers, name)
		}
	}
	rows := []string{
		"ID|" + shortID(n.ID, verbose),
		"Name|" + n.Name,
		"Node Pool|" + orNone(n.NodePool),
		"Class|" + orNone(n.NodeClass),
		"DC|" + n.Datacenter,
		"Drain|" + drain,
		"Eligibility|" + n.SchedulingEligibility,
		"Status|" + n.Status,
	}
	if n.StatusDescription != "" {
		rows = append(rows, "Status Description|"+n.StatusDescription)
	}
	rows = append(rows, "Address|"+orNone(n.HTTPAddr), "Drivers|"+orNone(strings.Join(drivers, ",")))
	if n.LastDrain != nil && verbose {
		rows = append(rows, "Last Drain|"+fmt.Sprintf("%s (%s)", n.LastDrain.Status, formatTime(n.LastDrain.UpdatedAt)))
	}
	return rows
}

// nodeEvents lists the newest events first; without verbose, only the
// last ten, since a flapping node can have many.
func nodeEvents(n *api.Node, m *Meta, verbose bool) string {
	if len(n.Events) == 0 {
		return ""
	}
	events := append([]*api.NodeEvent(nil), n.Events...)
	sort.SliceStable(events, func(i, j int) bool { return events[i].Timestamp.After(events[j].Timestamp) })
	if !verbose && len(events) > 10 {
		events = events[:10]
	}
	rows := []string{"Time|Subsystem|Message"}
	for _, e := range events {
		when := formatTime(e.Timestamp)
		if !verbose {
			when = relTime(e.Timestamp, m.now())
		}
		msg := e.Message
		if len(e.Details) > 0 && verbose {
			var kv []string
			for _, k := range sortedKeys(e.Details) {
				kv = append(kv, k+": "+e.Details[k])
			}
			msg += " (" + strings.Join(kv, ", ") + ")"
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%s", when, e.Subsystem, msg))
	}
	return columns(rows)
}

// allocatedResources sums what the node's allocations hold against what
// the node offers. An allocation holds its resources until its client
// reports it stopped, whatever the servers want (DESIGN.md, promise 1), so
// the sum is over allocations whose client status is not terminal.
func allocatedResources(n *api.Node, allocs []*api.Allocation) string {
	var cpu, mem, disk int64
	for _, a := range allocs {
		if a.ClientTerminalStatus() {
			continue
		}
		c, mm, d := a.AllocatedResources.Totals()
		cpu, mem, disk = cpu+c, mem+mm, disk+d
	}
	totalCPU, totalMem, totalDisk := n.Allocatable()
	return columns([]string{
		"CPU|Memory|Disk",
		fmt.Sprintf("%d/%d MHz|%s/%s|%s/%s", cpu, totalCPU, formatMiB(mem), formatMiB(totalMem), formatMiB(disk), formatMiB(totalDisk)),
	})
}

func mapKeyValues(kv map[string]string) string {
	if len(kv) == 0 {
		return ""
	}
	rows := make([]string, 0, len(kv))
	for _, k := range sortedKeys(kv) {
		rows = append(rows, k+"|"+kv[k])
	}
	return keyValues(rows)
}
