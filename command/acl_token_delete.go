package command

const aclTokenDeleteHelp = `
Usage: drover acl token delete [options] <accessor_id>

  Delete an ACL token: its secret stops working at once. Needs a
  management token.
`

func aclTokenDelete(m *Meta, args []string) int {
	c := m.cmdLine("acl token delete", aclTokenDeleteHelp, takes(1, "<accessor_id>"))
	client, code, ok := c.start(args)
	if !ok {
		return code
	}
	id := c.Arg(0)
	if _, err := client.ACLTokens().Delete(id, nil); err != nil {
		return m.errorf("Error deleting token: %v", err)
	}
	m.out("Token %s successfully deleted", id)
	return 0
}
