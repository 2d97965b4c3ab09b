package command

const aclTokenSelfHelp = `
Usage: drover acl token self [options]

  Show the token this command runs with (-token, DROVER_TOKEN or
  NOMAD_TOKEN), or the anonymous token when there is none.

Self Options:
` + aclOutputHelp

func aclTokenSelf(m *Meta, args []string) int {
	c := m.cmdLine("acl token self", aclTokenSelfHelp, noArgs).withOutput()
	client, code, ok := c.start(args)
	if !ok {
		return code
	}
	token, _, err := client.ACLTokens().Self(nil)
	if err != nil {
		return m.errorf("Error fetching self token: %v", err)
	}
	return c.show(token, func() string { return formatACLToken(token) })
}
