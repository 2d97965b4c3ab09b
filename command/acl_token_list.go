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
	c := m.cmdLine("acl token list", aclTokenListHelp, noArgs).withOutput()
	client, code, ok := c.start(args)
	if !ok {
		return code
	}
	tokens, _, err := client.ACLTokens().List(nil)
	if err != nil {
		return m.errorf("Error listing ACL tokens: %v", err)
	}
	return c.showList(tokens, len(tokens), "No tokens found", func() string {
		now := m.now()
		rows := []string{"Name|Type|Global|Accessor ID|Expired"}
		for _, t := range tokens {
			rows = append(rows, fmt.Sprintf("%s|%s|%t|%s|%t", t.Name, t.Type, t.Global, t.AccessorID, tokenExpired(t, now)))
		}
		return columns(rows)
	})
}

// tokenExpired reports whether a listed token has expired at now.
func tokenExpired(t *api.ACLTokenListStub, now time.Time) bool {
	return t.ExpirationTime != nil && !now.Before(*t.ExpirationTime)
}
