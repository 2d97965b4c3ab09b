package acl

import (
	"errors"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/drover-sched/drover/helper/fuzzseed"
)

// FuzzPolicyParse feeds policy rules to Parse, which runs when a policy is
// written and again whenever a server or client compiles a token's
// policies: a stored policy that made it panic would fail every request
// made with a token holding it. Whatever the rules:
//
//   - Parse returns a policy or a *ParseError whose every problem says
//     something, and never panics or recurses deeply (the target runs
//     under a 16 MiB stack);
//   - a policy parses the same way twice, and its capability lists hold
//     no duplicates, as Policy promises;
//   - it compiles into an ACL that answers without a panic, and
//     granting the same policy twice grants nothing more.
func FuzzPolicyParse(f *testing.F) {
	for _, seed := range fuzzseed.Files(f, "../examples/acl-*.hcl") {
		f.Add(string(seed))
	}
	for _, s := range fuzzseed.GoStringLiterals(f, "*_test.go", looksLikePolicy) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rules string) {
		defer debug.SetMaxStack(debug.SetMaxStack(16 << 20))
		p, err := Parse(rules)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || len(pe.Problems) == 0 {
				t.Fatalf("the error is a %T without problems: %v", err, err)
			}
			for _, prob := range pe.Problems {
				if strings.TrimSpace(prob) == "" {
					t.Fatalf("an empty problem in %q", pe.Problems)
				}
			}
			return
		}
		again, err := Parse(rules)
		if err != nil || !reflect.DeepEqual(p, again) {
			t.Fatalf("the same rules parsed differently: %v", err)
		}
		for _, caps := range capabilityLists(p) {
			if dup := duplicate(caps); dup != "" {
				t.Fatalf("capability %q listed twice in %q", dup, caps)
			}
		}

		once, twice := NewACL(false, []*Policy{p}), NewACL(false, []*Policy{p, again})
		for _, q := range fuzzACLQueries {
			if a, b := q.ask(once), q.ask(twice); a != b {
				t.Fatalf("%s: %v with the policy once, %v with it twice", q.name, a, b)
			}
		}
	})
}

// fuzzACLQueries are questions an endpoint asks an ACL.
var fuzzACLQueries = func() []aclQuery {
	var qs []aclQuery
	for _, ns := range []string{"default", "prod-web", "x"} {
		for _, op := range []string{"submit-job", "read-job", "list-jobs", "read-logs", "read-fs", "alloc-lifecycle", "dispatch-job", "scale-job", "deny"} {
			qs = append(qs, aclQuery{"namespace " + ns + " " + op, func(a *ACL) bool { return a.AllowNamespaceOperation(ns, op) }})
		}
		qs = append(qs, aclQuery{"namespace " + ns, func(a *ACL) bool { return a.AllowNamespace(ns) }})
		qs = append(qs, aclQuery{"node pool " + ns, func(a *ACL) bool { return a.AllowNodePoolOperation(ns, "read") }})
	}
	return append(qs,
		aclQuery{"node read", (*ACL).AllowNodeRead}, aclQuery{"node write", (*ACL).AllowNodeWrite},
		aclQuery{"agent read", (*ACL).AllowAgentRead}, aclQuery{"agent write", (*ACL).AllowAgentWrite},
		aclQuery{"operator read", (*ACL).AllowOperatorRead}, aclQuery{"operator write", (*ACL).AllowOperatorWrite},
		aclQuery{"operator snapshot-save", func(a *ACL) bool { return a.AllowOperatorOperation("snapshot-save") }},
		aclQuery{"quota read", (*ACL).AllowQuotaRead}, aclQuery{"plugin read", (*ACL).AllowPluginRead},
	)
}()

type aclQuery struct {
	name string
	ask  func(*ACL) bool
}

func capabilityLists(p *Policy) [][]string {
	var out [][]string
	for _, r := range p.Namespaces {
		out = append(out, r.Capabilities)
		for _, v := range r.Variables {
			out = append(out, v.Capabilities)
		}
	}
	for _, rs := range [][]*NamedRule{p.NodePools, p.HostVolumes} {
		for _, r := range rs {
			out = append(out, r.Capabilities)
		}
	}
	for _, r := range []*Rule{p.Agent, p.Node, p.Operator, p.Quota, p.Plugin} {
		if r != nil {
			out = append(out, r.Capabilities)
		}
	}
	return out
}

func duplicate(list []string) string {
	sorted := slices.Sorted(slices.Values(list))
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return sorted[i]
		}
	}
	return ""
}

func looksLikePolicy(s string) bool {
	for _, kw := range []string{"namespace", "node", "agent", "operator", "policy", "capabilities", "host_volume", "quota", "plugin"} {
		if strings.Contains(s, kw) && strings.ContainsAny(s, "{=") {
			return true
		}
	}
	return false
}
