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
	c := m.cmdLine("acl policy apply", aclPolicyApplyHelp, takes(2, "<name> and <path>"))
	description := c.String("description", "", "")
	if code, ok := c.parse(args); !ok {
		return code
	}
	name := c.Arg(0)
	rules, err := m.readInput(c.Arg(1), acl.MaxRulesSize, "the policy rules")
	if err != nil {
		return m.errorf("Error reading %v", err)
	}
	client, code, ok := c.client()
	if !ok {
		return code
	}
	policy := &api.ACLPolicy{Name: name, Description: *description, Rules: string(rules)}
	if _, err := client.ACLPolicies().Upsert(policy, nil); err != nil {
		return m.errorf("Error writing ACL policy: %v", err)
	}
	m.out("Successfully wrote %q ACL policy!", name)
	return 0
}
