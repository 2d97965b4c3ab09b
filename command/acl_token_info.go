package command

const aclTokenInfoHelp = `
Usage: drover acl token info [options] <accessor_id>

  Show an ACL token. A management token reads any token, another token
  only itself. The Secret ID is not shown: Drover keeps only a hash of it.

Info Options:
` + aclOutputHelp

func aclTokenInfo(m *Meta, args []string) int {
	c := m.cmdLine("acl token info", aclTokenInfoHelp, takes(1, "<accessor_id>")).withOutput()
	client, code, ok := c.start(args)
	if !ok {
		return code
	}
	token, _, err := client.ACLTokens().Info(c.Arg(0), nil)
	if err != nil {
		return m.errorf("Error fetching token: %v", err)
	}
	return c.show(token, func() string { return formatACLToken(token) })
}
