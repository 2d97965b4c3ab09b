package command

const aclBootstrapHelp = `
Usage: drover acl bootstrap [options] [<path>]

  Bootstrap the ACL system: create the first management token and print
  it. This works once per cluster; its Secret ID is shown only now, so keep
  it safe. <path> may name a file holding the secret to use (a UUID), or
  "-" to read it from stdin; without it the servers make one.

  If every management token is lost, write the reset index the refusal
  names into <data_dir>/server/acl-bootstrap-reset on the leader and
  bootstrap again.

Bootstrap Options:
` + aclOutputHelp

func aclBootstrap(m *Meta, args []string) int {
	c := m.cmdLine("acl bootstrap", aclBootstrapHelp, takesUpTo(0, 1, "<path>")).withOutput()
	if code, ok := c.parse(args); !ok {
		return code
	}
	var secret string
	if c.NArg() == 1 {
		s, err := m.trimmedInput(c.Arg(0), "the bootstrap secret")
		if err != nil {
			return m.errorf("Error reading %v", err)
		}
		secret = s
	}
	client, code, ok := c.client()
	if !ok {
		return code
	}
	token, _, err := client.ACLTokens().BootstrapOpts(secret, nil)
	if err != nil {
		return m.errorf("Error bootstrapping: %v", err)
	}
	return c.show(token, func() string { return formatACLToken(token) })
}
