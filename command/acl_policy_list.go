package command

import "fmt"

const aclPolicyListHelp = `
Usage: drover acl policy list [options]

  List the ACL policies: all of them for a management token, the ones a
  client token has for any other.

List Options:
` + aclOutputHelp

func aclPolicyList(m *Meta, args []string) int {
	fs := m.flagSet("acl policy list", aclPolicyListHelp)
	var out outputFlags
	out.register(fs)
	if code, ok := m.parse(fs, args); !ok {
		return code
	}
	if code, ok := out.check(m, fs); !ok {
		return code
	}
	if fs.NArg() != 0 {
		return m.usageError(fs, "This command takes no arguments")
	}
	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
	}
	policies, _, err := client.ACLPolicies().List(nil)
	if err != nil {
		return m.errorf("Error listing ACL policies: %v", err)
	}
	if code, done := out.print(m, policies); done {
		return code
	}
	if len(policies) == 0 {
		m.out("No policies found")
		return 0
	}
	rows := []string{"Name|Description"}
	for _, p := range policies {
		rows = append(rows, fmt.Sprintf("%s|%s", p.Name, p.Description))
	}
	fmt.Fprint(m.stdout, columns(rows))
	return 0
}
