package command

const aclPolicyDeleteHelp = `
Usage: drover acl policy delete [options] <name>

  Delete an ACL policy. Tokens that name it keep the name and get nothing
  from it. Needs a management token.
`

func aclPolicyDelete(m *Meta, args []string) int {
	fs := m.flagSet("acl policy delete", aclPolicyDeleteHelp)
	if code, ok := m.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return m.usageError(fs, "This command takes one argument: <name>")
	}
	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
	}
	name := fs.Arg(0)
	if _, err := client.ACLPolicies().Delete(name, nil); err != nil {
		return m.errorf("Error deleting ACL policy: %v", err)
	}
	m.out("Successfully deleted %q ACL policy!", name)
	return 0
}
