package command

const nodeEligibilityHelp = `
Usage: drover node eligibility [options] <node>

  Mark a node eligible or ineligible for new allocations. Allocations
  already on the node keep running either way; to move them, use
  "node drain".

Eligibility Options:

  -enable    Make the node eligible.
  -disable   Make the node ineligible.
`

func nodeEligibility(m *Meta, args []string) int {
	// The flags are checked before the count of arguments.
	c := m.cmdLine("node eligibility", nodeEligibilityHelp, anyArgs)
	enable := c.Bool("enable", false, "")
	disable := c.Bool("disable", false, "")
	if code, ok := c.parse(args); !ok {
		return code
	}
	if *enable == *disable {
		return c.usageError("Exactly one of -enable and -disable is required")
	}
	if code, ok := c.checkArgs(takes(1, "<node>")); !ok {
		return code
	}
	client, nodeID, code, ok := c.clientFor(nodeKind)
	if !ok {
		return code
	}
	if _, err := client.Nodes().ToggleEligibility(nodeID, *enable, nil); err != nil {
		return m.errorf("Error updating scheduling eligibility: %v", err)
	}
	state := "ineligible"
	if *enable {
		state = "eligible"
	}
	m.out("Node %q scheduling eligibility set: %s for scheduling", nodeID, state)
	return 0
}
