package command

import "fmt"

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
	fs := m.flagSet("acl token update", aclTokenUpdateHelp)
	name := fs.String("name", "", "")
	typ := fs.String("type", "", "")
	var policies stringList
	fs.Var(&policies, "policy", "")
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
	if flagWasSet(fs, "name") {
		token.Name = *name
	}
	if flagWasSet(fs, "type") {
		token.Type = *typ
		if *typ == "management" && !flagWasSet(fs, "policy") {
			token.Policies = nil
		}
	}
	if flagWasSet(fs, "policy") {
		token.Policies = policies
	}
	updated, _, err := client.ACLTokens().Update(token, nil)
	if err != nil {
		return m.errorf("Error updating token: %v", err)
	}
	if code, done := out.print(m, updated); done {
		return code
	}
	fmt.Fprint(m.stdout, formatACLToken(updated))
	return 0
}
