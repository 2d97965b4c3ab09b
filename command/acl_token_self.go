package command

import "fmt"

const aclTokenSelfHelp = `
Usage: drover acl token self [options]

  Show the token this command runs with (-token, DROVER_TOKEN or
  NOMAD_TOKEN), or the anonymous token when there is none.

Self Options:
` + aclOutputHelp

func aclTokenSelf(m *Meta, args []string) int {
	fs := m.flagSet("acl token self", aclTokenSelfHelp)
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
	token, _, err := client.ACLTokens().Self(nil)
	if err != nil {
		return m.errorf("Error fetching self token: %v", err)
	}
	if code, done := out.print(m, token); done {
		return code
	}
	fmt.Fprint(m.stdout, formatACLToken(token))
	return 0
}
