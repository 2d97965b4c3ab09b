package command

import (
	"fmt"
	"net"
	"sort"

	"github.com/drover-sched/drover/api"
)

const serverMembersHelp = `
Usage: drover server members [options]

  List the servers of the cluster as the agent's membership sees them, and
  which one leads.

Members Options:

  -json      Print the members as JSON.
  -verbose   Show each member's tags.
`

func serverMembers(m *Meta, args []string) int {
	c := m.cmdLine("server members", serverMembersHelp, noArgs).withJSON().withVerbose()
	client, code, ok := c.start(args)
	if !ok {
		return code
	}
	members, err := client.Agent().Members()
	if err != nil {
		return m.errorf("Error querying servers: %v", err)
	}
	return c.show(members.Members, func() string {
		// No leader is worth showing (every row says false), not an error.
		leader, _ := client.Status().Leader()
		return membersTable(members.Members, leader, c.verbose)
	})
}

// membersTable lists the servers by name, marking the leader.
func membersTable(members []*api.AgentMember, leader string, verbose bool) string {
	sorted := append([]*api.AgentMember(nil), members...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	header := "Name|Address|Port|Status|Leader|Raft Version|Build|Datacenter|Region"
	if verbose {
		header += "|Tags"
	}
	rows := []string{header}
	for _, mem := range sorted {
		row := fmt.Sprintf("%s|%s|%d|%s|%t|%s|%s|%s|%s", mem.Name, mem.Addr, mem.Port, mem.Status,
			isLeader(mem, leader), orNone(mem.Tags["raft_vsn"]), orNone(mem.Tags["build"]),
			orNone(mem.Tags["dc"]), orNone(mem.Tags["region"]))
		if verbose {
			var tags []string
			for _, k := range sortedKeys(mem.Tags) {
				tags = append(tags, k+"="+mem.Tags[k])
			}
			row += "|" + fmt.Sprint(tags)
		}
		rows = append(rows, row)
	}
	return columns(rows)
}

// isLeader matches a member to the leader's RPC address: the member's
// address with the RPC port from its tags.
func isLeader(mem *api.AgentMember, leader string) bool {
	if leader == "" {
		return false
	}
	if port := mem.Tags["port"]; port != "" {
		return net.JoinHostPort(mem.Addr, port) == leader
	}
	host, _, err := net.SplitHostPort(leader)
	return err == nil && host == mem.Addr
}
