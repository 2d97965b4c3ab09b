package command

import "fmt"

const aclTokenInfoHelp = `
Usage: drover acl token info [options] <accessor_id>

  Show an ACL token. A management token reads any token, another token
  only itself. The Secret ID is not shown: Drover keeps only a hash of it.

Info Options:
` + aclOutputHelp

func aclTokenInfo(m *Meta, args []string) int {
	fs := m.flagSet("acl token info", aclTokenInfoHelp)
	var out outputFlags
	out.register(fs)
	if code, ok := m.parse(fs, args); !ok {
		return code
	}
	if code, ok := out.check(m, fs); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return m.usageError(fs, "This command takes one argument: <accessor_id>")
	}
	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
	}
	token, _, err := client.ACLTokens().Info(fs.Arg(0), nil)
	if err != nil {
		return m.errorf("Error fetching token: %v", err)
	}
	if code, done := out.print(m, token); done {
		return code
	}
	fmt.Fprint(m.stdout, formatACLToken(token))
	return 0
}
