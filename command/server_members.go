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
	fs := m.flagSet("server members", serverMembersHelp)
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
	members, err := client.Agent().Members()
	if err != nil {
		return m.errorf("Error querying servers: %v", err)
	}
	if *asJSON {
		return m.printJSON(members.Members)
	}
	// No leader is worth showing (every row says false), not an error.
	leader, _ := client.Status().Leader()

	sorted := append([]*api.AgentMember(nil), members.Members...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	header := "Name|Address|Port|Status|Leader|Raft Version|Build|Datacenter|Region"
	if *verbose {
		header += "|Tags"
	}
	rows := []string{header}
	for _, mem := range sorted {
		row := fmt.Sprintf("%s|%s|%d|%s|%t|%s|%s|%s|%s", mem.Name, mem.Addr, mem.Port, mem.Status,
			isLeader(mem, leader), orNone(mem.Tags["raft_vsn"]), orNone(mem.Tags["build"]),
			orNone(mem.Tags["dc"]), orNone(mem.Tags["region"]))
		if *verbose {
			var tags []string
			for _, k := range sortedKeys(mem.Tags) {
				tags = append(tags, k+"="+mem.Tags[k])
			}
			row += "|" + fmt.Sprint(tags)
		}
		rows = append(rows, row)
	}
	fmt.Fprint(m.stdout, columns(rows))
	return 0
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
