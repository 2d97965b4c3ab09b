package command

const aclTokenUpdateHelp = `
Usage: drover acl token update [options] <accessor_id>

  Change an ACL token's name, type or policies. Only what the flags name
  changes; the secret, creation time and expiry never do. Needs a
  management token.

Update Options:

  -name=<name>
    A new name for the token.

  -type=<client|management>
    A new type for the token.

  -policy=<name>
    The token's policies, replacing the current ones; repeat for more.
` + aclOutputHelp

func aclTokenUpdate(m *Meta, args []string) int {
	c := m.cmdLine("acl token update", aclTokenUpdateHelp, takes(1, "<accessor_id>")).withOutput()
	name := c.String("name", "", "")
	typ := c.String("type", "", "")
	var policies stringList
	c.Var(&policies, "policy", "")
	client, code, ok := c.start(args)
	if !ok {
		return code
	}
	token, _, err := client.ACLTokens().Info(c.Arg(0), nil)
	if err != nil {
		return m.errorf("Error fetching token: %v", err)
	}
	if c.flagWasSet("name") {
		token.Name = *name
	}
	if c.flagWasSet("type") {
		token.Type = *typ
		if *typ == "management" && !c.flagWasSet("policy") {
			token.Policies = nil
		}
	}
	if c.flagWasSet("policy") {
		token.Policies = policies
	}
	updated, _, err := client.ACLTokens().Update(token, nil)
	if err != nil {
		return m.errorf("Error updating token: %v", err)
	}
	return c.show(updated, func() string { return formatACLToken(updated) })
}
