package command

import "github.com/drover-sched/drover/api"

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
	c := m.cmdLine("acl token create", aclTokenCreateHelp, noArgs).withOutput()
	name := c.String("name", "", "")
	typ := c.String("type", "client", "")
	global := c.Bool("global", false, "")
	ttl := c.Duration("ttl", 0, "")
	var policies, roleIDs, roleNames stringList
	c.Var(&policies, "policy", "")
	c.Var(&roleIDs, "role-id", "")
	c.Var(&roleNames, "role-name", "")
	if code, ok := c.parse(args); !ok {
		return code
	}
	if len(roleIDs) > 0 || len(roleNames) > 0 {
		return m.errorf("Drover has no ACL roles: give the token its policies with -policy")
	}
	client, code, ok := c.client()
	if !ok {
		return code
	}
	tok := &api.ACLToken{Name: *name, Type: *typ, Policies: policies, Global: *global, ExpirationTTL: *ttl}
	created, _, err := client.ACLTokens().Create(tok, nil)
	if err != nil {
		return m.errorf("Error creating token: %v", err)
	}
	return c.show(created, func() string { return formatACLToken(created) })
}
