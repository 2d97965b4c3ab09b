package command

import (
	"fmt"

	"github.com/drover-sched/drover/api"
)

const aclTokenCreateHelp = `
Usage: drover acl token create [options]

  Create an ACL token and print it. Its Secret ID is shown only now: the
  servers keep just a hash of it. Needs a management token.

Create Options:

  -name=<name>
    A human-readable name for the token.

  -type=<client|management>
    The token's type. A client token may do what its policies allow; a
    management token may do everything. Default: client.

  -policy=<name>
    A policy the token has; repeat for more. Client tokens only.

  -global
    Mark the token global, as Nomad does for multi-region clusters. It
    cannot be changed later.

  -ttl=<duration>
    Make the token expire after this long, such as "1h". By default
    tokens never expire.
` + aclOutputHelp

func aclTokenCreate(m *Meta, args []string) int {
	fs := m.flagSet("acl token create", aclTokenCreateHelp)
	name := fs.String("name", "", "")
	typ := fs.String("type", "client", "")
	global := fs.Bool("global", false, "")
	ttl := fs.Duration("ttl", 0, "")
	var policies, roleIDs, roleNames stringList
	fs.Var(&policies, "policy", "")
	fs.Var(&roleIDs, "role-id", "")
	fs.Var(&roleNames, "role-name", "")
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
	if len(roleIDs) > 0 || len(roleNames) > 0 {
		return m.errorf("Drover has no ACL roles: give the token its policies with -policy")
	}
	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
	}
	tok := &api.ACLToken{Name: *name, Type: *typ, Policies: policies, Global: *global, ExpirationTTL: *ttl}
	created, _, err := client.ACLTokens().Create(tok, nil)
	if err != nil {
		return m.errorf("Error creating token: %v", err)
	}
	if code, done := out.print(m, created); done {
		return code
	}
	fmt.Fprint(m.stdout, formatACLToken(created))
	return 0
}
