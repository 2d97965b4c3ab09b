package command

const aclTokenDeleteHelp = `
Usage: drover acl token delete [options] <accessor_id>

  Delete an ACL token: its secret stops working at once. Needs a
  management token.
`

func aclTokenDelete(m *Meta, args []string) int {
	fs := m.flagSet("acl token delete", aclTokenDeleteHelp)
	if code, ok := m.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return m.usageError(fs, "This command takes one argument: <accessor_id>")
	}
	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
	}
	id := fs.Arg(0)
	if _, err := client.ACLTokens().Delete(id, nil); err != nil {
		return m.errorf("Error deleting token: %v", err)
	}
	m.out("Token %s successfully deleted", id)
	return 0
}
