package command

import "fmt"

const aclPolicyListHelp = `
Usage: drover acl policy list [options]

  List the ACL policies: all of them for a management token, the ones a
  client token has for any other.

List Options:
` + aclOutputHelp

func aclPolicyList(m *Meta, args []string) int {
	c := m.cmdLine("acl policy list", aclPolicyListHelp, noArgs).withOutput()
	client, code, ok := c.start(args)
	if !ok {
		return code
	}
	policies, _, err := client.ACLPolicies().List(nil)
	if err != nil {
		return m.errorf("Error listing ACL policies: %v", err)
	}
	return c.showList(policies, len(policies), "No policies found", func() string {
		rows := []string{"Name|Description"}
		for _, p := range policies {
			rows = append(rows, fmt.Sprintf("%s|%s", p.Name, p.Description))
		}
		return columns(rows)
	})
}
