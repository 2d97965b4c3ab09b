package command

import "fmt"

const serverJoinHelp = `
Usage: drover server join [options] <address> [<address>...]

  Join the agent's server to the servers at the given RPC addresses
  (host:port). A server already in a cluster adds servers that have no
  cluster yet; a server without a cluster joins the one the others lead.
  Servers that belong to another cluster or region are refused.
`

func serverJoin(m *Meta, args []string) int {
	c := m.cmdLine("server join", serverJoinHelp, positional{1, -1, "This command takes at least one address"})
	client, code, ok := c.start(args)
	if !ok {
		return code
	}
	n, err := client.Agent().Join(c.Args()...)
	if n > 0 {
		fmt.Fprintf(m.stdout, "Joined %d servers successfully\n", n)
	}
	if err != nil {
		return m.errorf("Error joining: %v", err)
	}
	return 0
}
