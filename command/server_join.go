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
	fs := m.flagSet("server join", serverJoinHelp)
	if code, ok := m.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return m.usageError(fs, "This command takes at least one address")
	}
	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
	}
	n, err := client.Agent().Join(fs.Args()...)
	if n > 0 {
		fmt.Fprintf(m.stdout, "Joined %d servers successfully\n", n)
	}
	if err != nil {
		return m.errorf("Error joining: %v", err)
	}
	return 0
}
