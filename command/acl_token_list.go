package command

import (
	"fmt"
	"time"

	"github.com/drover-sched/drover/api"
)

const aclTokenListHelp = `
Usage: drover acl token list [options]

  List the ACL tokens, without their secrets. Needs a management token.

List Options:
` + aclOutputHelp

func aclTokenList(m *Meta, args []string) int {
	fs := m.flagSet("acl token list", aclTokenListHelp)
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
	tokens, _, err := client.ACLTokens().List(nil)
	if err != nil {
		return m.errorf("Error listing ACL tokens: %v", err)
	}
	if code, done := out.print(m, tokens); done {
		return code
	}
	if len(tokens) == 0 {
		m.out("No tokens found")
		return 0
	}
	now := m.now()
	rows := []string{"Name|Type|Global|Accessor ID|Expired"}
	for _, t := range tokens {
		rows = append(rows, fmt.Sprintf("%s|%s|%t|%s|%t", t.Name, t.Type, t.Global, t.AccessorID, tokenExpired(t, now)))
	}
	fmt.Fprint(m.stdout, columns(rows))
	return 0
}

// tokenExpired reports whether a listed token has expired at now.
func tokenExpired(t *api.ACLTokenListStub, now time.Time) bool {
	return t.ExpirationTime != nil && !now.Before(*t.ExpirationTime)
}
