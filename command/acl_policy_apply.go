package command

import (
	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/api"
)

const aclPolicyApplyHelp = `
Usage: drover acl policy apply [options] <name> <path>

  Create or replace the ACL policy <name> with the rules in <path> ("-"
  reads them from stdin), in Nomad's policy language. The rules are
  checked by the servers; a mistake is reported with its line. Needs a
  management token.

Apply Options:

  -description=<text>
    A human-readable description of the policy.
`

func aclPolicyApply(m *Meta, args []string) int {
	fs := m.flagSet("acl policy apply", aclPolicyApplyHelp)
	description := fs.String("description", "", "")
	if code, ok := m.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 2 {
		return m.usageError(fs, "This command takes two arguments: <name> and <path>")
	}
	name := fs.Arg(0)
	rules, err := m.readInput(fs.Arg(1), acl.MaxRulesSize, "the policy rules")
	if err != nil {
		return m.errorf("Error reading %v", err)
	}
	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
	}
	policy := &api.ACLPolicy{Name: name, Description: *description, Rules: string(rules)}
	if _, err := client.ACLPolicies().Upsert(policy, nil); err != nil {
		return m.errorf("Error writing ACL policy: %v", err)
	}
	m.out("Successfully wrote %q ACL policy!", name)
	return 0
}
