package command

const aclPolicyDeleteHelp = `
Usage: drover acl policy delete [options] <name>

  Delete an ACL policy. Tokens that name it keep the name and get nothing
  from it. Needs a management token.
`

func aclPolicyDelete(m *Meta, args []string) int {
	c := m.cmdLine("acl policy delete", aclPolicyDeleteHelp, takes(1, "<name>"))
	client, code, ok := c.start(args)
	if !ok {
		return code
	}
	name := c.Arg(0)
	if _, err := client.ACLPolicies().Delete(name, nil); err != nil {
		return m.errorf("Error deleting ACL policy: %v", err)
	}
	m.out("Successfully deleted %q ACL policy!", name)
	return 0
}
