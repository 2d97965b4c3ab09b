package command

import (
	"fmt"

	"github.com/drover-sched/drover/api"
)

const operatorRaftListPeersHelp = `
Usage: drover operator raft list-peers [options]

  List the raft peers: each server's raft ID and address, whether it leads
  and whether it votes.

List-Peers Options:

  -stale   Let any server answer, not only the leader; useful when the
           cluster has lost its leader.
`

func operatorRaftListPeers(m *Meta, args []string) int {
	c := m.cmdLine("operator raft list-peers", operatorRaftListPeersHelp, noArgs)
	stale := c.Bool("stale", false, "")
	if code, ok := c.parse(args); !ok {
		return code
	}
	client, code, ok := c.client()
	if !ok {
		return code
	}
	conf, err := client.Operator().RaftGetConfiguration(&api.QueryOptions{AllowStale: *stale})
	if err != nil {
		return m.errorf("Error getting peers: %v", err)
	}
	rows := []string{"Node|ID|Address|State|Voter|RaftProtocol"}
	for _, s := range conf.Servers {
		state := "follower"
		if s.Leader {
			state = "leader"
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%t|%s", s.Node, s.ID, s.Address, state, s.Voter, orNone(s.RaftProtocol)))
	}
	fmt.Fprint(m.stdout, columns(rows))
	return 0
}
