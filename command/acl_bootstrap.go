package command

import "fmt"

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
	fs := m.flagSet("acl bootstrap", aclBootstrapHelp)
	var out outputFlags
	out.register(fs)
	if code, ok := m.parse(fs, args); !ok {
		return code
	}
	if code, ok := out.check(m, fs); !ok {
		return code
	}
	if fs.NArg() > 1 {
		return m.usageError(fs, "This command takes at most one argument: <path>")
	}
	var secret string
	if fs.NArg() == 1 {
		s, err := m.trimmedInput(fs.Arg(0), "the bootstrap secret")
		if err != nil {
			return m.errorf("Error reading %v", err)
		}
		secret = s
	}
	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
	}
	token, _, err := client.ACLTokens().BootstrapOpts(secret, nil)
	if err != nil {
		return m.errorf("Error bootstrapping: %v", err)
	}
	if code, done := out.print(m, token); done {
		return code
	}
	fmt.Fprint(m.stdout, formatACLToken(token))
	return 0
}
