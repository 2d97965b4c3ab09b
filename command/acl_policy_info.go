package command

import (
	"fmt"
	"strings"
)

const aclPolicyInfoHelp = `
Usage: drover acl policy info [options] <name>

  Show an ACL policy and its rules. A management token reads any policy;
  another token the policies it has, and anyone the anonymous policy.

Info Options:
` + aclOutputHelp

func aclPolicyInfo(m *Meta, args []string) int {
	c := m.cmdLine("acl policy info", aclPolicyInfoHelp, takes(1, "<name>")).withOutput()
	client, code, ok := c.start(args)
	if !ok {
		return code
	}
	policy, _, err := client.ACLPolicies().Info(c.Arg(0), nil)
	if err != nil {
		return m.errorf("Error reading ACL policy: %v", err)
	}
	return c.show(policy, func() string {
		return keyValues([]string{
			"Name|" + policy.Name,
			"Description|" + policy.Description,
			fmt.Sprintf("CreateIndex|%d", policy.CreateIndex),
			fmt.Sprintf("ModifyIndex|%d", policy.ModifyIndex),
		}) + "\nRules\n\n" + strings.TrimRight(policy.Rules, "\n") + "\n"
	})
}
