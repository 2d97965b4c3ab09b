package command

import "fmt"

const operatorRaftRemovePeerHelp = `
Usage: drover operator raft remove-peer [options]

  Remove a server from the raft peer set, so that the quorum stops counting
  it. Use it for a server that is gone for good; a server that is only
  down comes back on its own. The last peer cannot be removed.

Remove-Peer Options:

  -peer-address=<host:port>   The raft (RPC) address of the server.
  -peer-id=<id>               The raft ID of the server.

  Give exactly one of them; "operator raft list-peers" shows both.
`

func operatorRaftRemovePeer(m *Meta, args []string) int {
	c := m.cmdLine("operator raft remove-peer", operatorRaftRemovePeerHelp, noArgs)
	addr := c.String("peer-address", "", "")
	id := c.String("peer-id", "", "")
	if code, ok := c.parse(args); !ok {
		return code
	}
	if (*addr == "") == (*id == "") {
		return c.usageError("Give exactly one of -peer-address or -peer-id")
	}
	client, code, ok := c.client()
	if !ok {
		return code
	}
	if *addr != "" {
		if err := client.Operator().RaftRemovePeerByAddress(*addr, nil); err != nil {
			return m.errorf("Error removing peer: %v", err)
		}
		fmt.Fprintf(m.stdout, "Removed peer with address %q\n", *addr)
		return 0
	}
	if err := client.Operator().RaftRemovePeerByID(*id, nil); err != nil {
		return m.errorf("Error removing peer: %v", err)
	}
	fmt.Fprintf(m.stdout, "Removed peer with id %q\n", *id)
	return 0
}
