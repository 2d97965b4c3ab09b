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
	fs := m.flagSet("acl policy info", aclPolicyInfoHelp)
	var out outputFlags
	out.register(fs)
	if code, ok := m.parse(fs, args); !ok {
		return code
	}
	if code, ok := out.check(m, fs); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return m.usageError(fs, "This command takes one argument: <name>")
	}
	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
	}
	policy, _, err := client.ACLPolicies().Info(fs.Arg(0), nil)
	if err != nil {
		return m.errorf("Error reading ACL policy: %v", err)
	}
	if code, done := out.print(m, policy); done {
		return code
	}
	var b strings.Builder
	b.WriteString(keyValues([]string{
		"Name|" + policy.Name,
		"Description|" + policy.Description,
		fmt.Sprintf("CreateIndex|%d", policy.CreateIndex),
		fmt.Sprintf("ModifyIndex|%d", policy.ModifyIndex),
	}))
	b.WriteString("\nRules\n\n")
	b.WriteString(strings.TrimRight(policy.Rules, "\n"))
	b.WriteString("\n")
	fmt.Fprint(m.stdout, b.String())
	return 0
}
