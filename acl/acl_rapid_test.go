package acl

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// Names and globs drawn by the generators: few enough that policies often
// overlap, with globs that match some names and not others.
var (
	rapidNames   = []string{"a", "b", "ab", "prod", "prod-api", "*", "a*", "*b", "prod-*", "p*d*"}
	rapidProbes  = []string{"a", "b", "ab", "abb", "prod", "prod-api", "prod-db", "zz", "*"}
	rapidOps     = []string{"list-jobs", "read-job", "submit-job", "read-logs", "alloc-exec", "scale-job", "alloc-node-exec"}
	rapidCoarse  = []string{"deny", "read", "write"}
	rapidNsPolis = []string{"", "deny", "read", "write", "scale"}
)

// genRules draws one policy's rules text: a few namespace blocks with a
// policy, capabilities or both, and maybe node/agent/operator blocks.
func genRules(t *rapid.T, label string) string {
	var b strings.Builder
	names := rapid.SliceOfNDistinct(rapid.SampledFrom(rapidNames), 0, 4, rapid.ID[string]).Draw(t, label+"-namespaces")
	for i, n := range names {
		pol := rapid.SampledFrom(rapidNsPolis).Draw(t, fmt.Sprintf("%s-ns%d-policy", label, i))
		caps := rapid.SliceOfNDistinct(rapid.SampledFrom(append([]string{"deny"}, rapidOps...)), 0, 3, rapid.ID[string]).
			Draw(t, fmt.Sprintf("%s-ns%d-caps", label, i))
		if pol == "" && len(caps) == 0 {
			pol = "read"
		}
		fmt.Fprintf(&b, "namespace %q {\n", n)
		if pol != "" {
			fmt.Fprintf(&b, "  policy = %q\n", pol)
		}
		if len(caps) > 0 {
			quoted := make([]string, len(caps))
			for i, c := range caps {
				quoted[i] = fmt.Sprintf("%q", c)
			}
			fmt.Fprintf(&b, "  capabilities = [%s]\n", strings.Join(quoted, ", "))
		}
		b.WriteString("}\n")
	}
	for _, block := range []string{"node", "agent", "operator"} {
		if rapid.Bool().Draw(t, label+"-has-"+block) {
			fmt.Fprintf(&b, "%s { policy = %q }\n", block, rapid.SampledFrom(rapidCoarse).Draw(t, label+"-"+block))
		}
	}
	if b.Len() == 0 {
		b.WriteString(`node { policy = "read" }` + "\n")
	}
	return b.String()
}

func genPolicies(t *rapid.T) []*Policy {
	n := rapid.IntRange(0, 5).Draw(t, "policies")
	out := make([]*Policy, n)
	for i := range out {
		rules := genRules(t, fmt.Sprintf("p%d", i))
		p, err := Parse(rules)
		if err != nil {
			t.Fatalf("generated rules do not parse: %v\n%s", err, rules)
		}
		out[i] = p
	}
	return out
}

// decisions records every answer an ACL gives to the probes.
func decisions(a *ACL) []string {
	var out []string
	for _, ns := range rapidProbes {
		for _, op := range rapidOps {
			out = append(out, fmt.Sprintf("%s/%s=%v", ns, op, a.AllowNamespaceOperation(ns, op)))
		}
		out = append(out, fmt.Sprintf("%s=%v", ns, a.AllowNamespace(ns)))
	}
	out = append(out, fmt.Sprint(a.AllowNodeRead(), a.AllowNodeWrite(), a.AllowAgentRead(), a.AllowAgentWrite(),
		a.AllowOperatorRead(), a.AllowOperatorWrite()))
	return out
}

// Merging does not depend on the order policies are given in: any
// permutation compiles to the same ACL and so gives the same answers.
func TestRapidMergeIsOrderIndependent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		policies := genPolicies(t)
		want := NewACL(false, policies)
		perm := rapid.Permutation(policies).Draw(t, "permutation")
		got := NewACL(false, perm)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("permuted policies compile differently:\n%+v\n%+v", got, want)
		}
		if !reflect.DeepEqual(decisions(got), decisions(want)) {
			t.Fatalf("permuted policies answer differently")
		}
	})
}

// Deny always wins: a namespace any policy denies by name allows nothing,
// and a coarse block any policy denies allows neither read nor write,
// whatever the other policies grant.
func TestRapidDenyAlwaysWins(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		policies := genPolicies(t)
		a := NewACL(false, policies)
		for _, p := range policies {
			for _, r := range p.Namespaces {
				if !contains(r.Capabilities, "deny") || strings.Contains(r.Name, "*") {
					continue
				}
				if a.AllowNamespace(r.Name) {
					t.Fatalf("namespace %q is denied by a policy but visible", r.Name)
				}
				for _, op := range rapidOps {
					if a.AllowNamespaceOperation(r.Name, op) {
						t.Fatalf("namespace %q is denied by a policy but allows %s", r.Name, op)
					}
				}
			}
			if p.Node != nil && p.Node.Policy == "deny" && (a.AllowNodeRead() || a.AllowNodeWrite()) {
				t.Fatal("node is denied by a policy but allowed")
			}
			if p.Agent != nil && p.Agent.Policy == "deny" && (a.AllowAgentRead() || a.AllowAgentWrite()) {
				t.Fatal("agent is denied by a policy but allowed")
			}
			if p.Operator != nil && p.Operator.Policy == "deny" && (a.AllowOperatorRead() || a.AllowOperatorWrite()) {
				t.Fatal("operator is denied by a policy but allowed")
			}
		}
	})
}

// Without a deny, a namespace named exactly allows what some policy's rule
// for that name grants, and nothing else: merging is a union.
func TestRapidMergeIsAUnionWithoutDeny(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		policies := genPolicies(t)
		a := NewACL(false, policies)
		granted := map[string]map[string]bool{}
		denied := map[string]bool{}
		for _, p := range policies {
			for _, r := range p.Namespaces {
				if granted[r.Name] == nil {
					granted[r.Name] = map[string]bool{}
				}
				for _, c := range r.Capabilities {
					granted[r.Name][c] = true
				}
				denied[r.Name] = denied[r.Name] || contains(r.Capabilities, "deny")
			}
		}
		names := make([]string, 0, len(granted))
		for n := range granted {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if denied[n] || strings.Contains(n, "*") {
				continue
			}
			for _, op := range rapidOps {
				if got := a.AllowNamespaceOperation(n, op); got != granted[n][op] {
					t.Fatalf("namespace %q op %s: allowed %v, but the union of its rules says %v", n, op, got, granted[n][op])
				}
			}
		}
	})
}
