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
	fs := m.flagSet("node eligibility", nodeEligibilityHelp)
	enable := fs.Bool("enable", false, "")
	disable := fs.Bool("disable", false, "")
	if code, ok := m.parse(fs, args); !ok {
		return code
	}
	if *enable == *disable {
		return m.usageError(fs, "Exactly one of -enable and -disable is required")
	}
	if fs.NArg() != 1 {
		return m.usageError(fs, "This command takes one argument: <node>")
	}
	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
	}
	nodeID, code, ok := m.resolveNode(client, fs.Arg(0), false)
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
