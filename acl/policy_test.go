package acl

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseAcceptsNomadPolicies(t *testing.T) {
	cases := []struct {
		name  string
		rules string
		check func(t *testing.T, p *Policy)
	}{
		{
			name:  "a read namespace expands to Nomad's read capabilities",
			rules: `namespace "default" { policy = "read" }`,
			check: func(t *testing.T, p *Policy) {
				want := []string{"list-jobs", "parse-job", "read-job", "csi-read-volume", "csi-list-volume",
					"host-volume-read", "list-scaling-policies", "read-scaling-policy", "read-job-scaling"}
				requireSameSet(t, p.Namespaces[0].Capabilities, want)
			},
		},
		{
			name:  "a write namespace adds submitting, logs, exec and lifecycle to read",
			rules: `namespace "default" { policy = "write" }`,
			check: func(t *testing.T, p *Policy) {
				want := []string{"list-jobs", "parse-job", "read-job", "csi-read-volume", "csi-list-volume",
					"host-volume-read", "list-scaling-policies", "read-scaling-policy", "read-job-scaling",
					"scale-job", "submit-job", "dispatch-job", "read-logs", "read-fs", "alloc-exec",
					"alloc-lifecycle", "csi-mount-volume", "csi-write-volume", "submit-recommendation",
					"host-volume-create"}
				requireSameSet(t, p.Namespaces[0].Capabilities, want)
			},
		},
		{
			name:  "a scale namespace grants scaling and reading the job only",
			rules: `namespace "default" { policy = "scale" }`,
			check: func(t *testing.T, p *Policy) {
				want := []string{"list-scaling-policies", "read-scaling-policy", "read-job-scaling", "scale-job",
					"read-job", "submit-recommendation"}
				requireSameSet(t, p.Namespaces[0].Capabilities, want)
			},
		},
		{
			name:  "capabilities beside a policy are added to its expansion",
			rules: "namespace \"ops\" {\n policy = \"read\"\n capabilities = [\"alloc-node-exec\", \"read-logs\"]\n}",
			check: func(t *testing.T, p *Policy) {
				c := p.Namespaces[0].Capabilities
				if !contains(c, "alloc-node-exec") || !contains(c, "read-logs") || !contains(c, "read-job") || contains(c, "submit-job") {
					t.Fatalf("capabilities %v", c)
				}
			},
		},
		{
			name:  "deny among capabilities leaves only deny",
			rules: "namespace \"x\" {\n policy = \"write\"\n capabilities = [\"deny\"]\n}",
			check: func(t *testing.T, p *Policy) {
				requireSameSet(t, p.Namespaces[0].Capabilities, []string{"deny"})
			},
		},
		{
			name:  "host-volume-write implies registering, creating, deleting and reading volumes",
			rules: `namespace "x" { capabilities = ["host-volume-write"] }`,
			check: func(t *testing.T, p *Policy) {
				requireSameSet(t, p.Namespaces[0].Capabilities, []string{"host-volume-write",
					"host-volume-register", "host-volume-create", "host-volume-delete", "host-volume-read"})
			},
		},
		{
			name: "every block Nomad documents is accepted and kept",
			rules: `
namespace "*" { policy = "read" }
namespace "prod-*" {
  policy = "write"
  variables {
    path "project/*" { capabilities = ["read", "write"] }
  }
}
node_pool "gpu_*" { policy = "write" }
host_volume "ssd" { policy = "read" }
node     { policy = "read" }
agent    { policy = "write" }
operator {
  policy       = "read"
  capabilities = ["snapshot-save"]
}
quota    { policy = "deny" }
plugin   { policy = "list" }
`,
			check: func(t *testing.T, p *Policy) {
				if len(p.Namespaces) != 2 || len(p.NodePools) != 1 || len(p.HostVolumes) != 1 {
					t.Fatalf("blocks: %+v", p)
				}
				if p.Node.Policy != "read" || p.Agent.Policy != "write" || p.Quota.Policy != "deny" || p.Plugin.Policy != "list" {
					t.Fatalf("coarse rules: node %+v agent %+v quota %+v plugin %+v", p.Node, p.Agent, p.Quota, p.Plugin)
				}
				requireSameSet(t, p.Operator.Capabilities, []string{"license-read", "snapshot-save"})
				requireSameSet(t, p.NodePools[0].Capabilities, []string{"read", "write", "delete"})
				requireSameSet(t, p.HostVolumes[0].Capabilities, []string{"mount-readonly"})
				v := p.Namespaces[1].Variables
				if len(v) != 1 || v[0].Path != "project/*" {
					t.Fatalf("variables %+v", v)
				}
				// read implies list, as in Nomad.
				requireSameSet(t, v[0].Capabilities, []string{"list", "read", "write"})
			},
		},
		{
			name:  "HCL's JSON form parses to the same policy",
			rules: `{"namespace": {"default": {"policy": "read", "capabilities": ["read-logs"]}}, "node": {"policy": "write"}}`,
			check: func(t *testing.T, p *Policy) {
				hclForm, err := Parse("namespace \"default\" {\n policy = \"read\"\n capabilities = [\"read-logs\"]\n}\nnode { policy = \"write\" }")
				if err != nil {
					t.Fatal(err)
				}
				// The compiled capability sets count too, as they did for reflect.DeepEqual.
				if diff := cmp.Diff(hclForm, p, cmp.AllowUnexported(Rule{}, NamedRule{}, NamespaceRule{})); diff != "" {
					t.Fatalf("JSON and HCL forms differ (-HCL +JSON):\n%s", diff)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.rules)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			tc.check(t, p)
		})
	}
}

func TestParseRefusesWithTheLineBlockAndWhatIsAllowed(t *testing.T) {
	cases := []struct {
		name  string
		rules string
		want  []string
	}{
		{"a misspelt namespace policy", "\n\nnamespace \"default\" {\n  policy = \"wrte\"\n}",
			[]string{"line 4", `namespace "default"`, `"wrte"`, "deny, read, write, scale"}},
		{"an unknown capability", `namespace "default" { capabilities = ["submit-jobs"] }`,
			[]string{"line 1", `namespace "default"`, `"submit-jobs"`, "submit-job", "read-logs"}},
		{"scale on a node block", "node {\n policy = \"scale\"\n}",
			[]string{"line 2", "node", `"scale"`, "deny, read, write"}},
		{"list on an agent block", `agent { policy = "list" }`, []string{"agent", `"list"`, "deny, read, write"}},
		{"write on a plugin block is allowed but foo is not", `plugin { policy = "foo" }`, []string{"plugin", "deny, list, read, write"}},
		{"a node block without a policy", `node {}`, []string{"line 1", "policy"}},
		{"an unknown block", "namespace \"a\" { policy = \"read\" }\nnodes { policy = \"read\" }", []string{"line 2", "nodes"}},
		{"an unknown attribute", "namespace \"a\" {\n  policy = \"read\"\n  polcy = \"write\"\n}", []string{"line 3", "polcy"}},
		{"a namespace name with a slash", `namespace "a/b" { policy = "read" }`, []string{`"a/b"`, "letters, digits"}},
		{"a namespace written twice", "namespace \"a\" { policy = \"read\" }\nnamespace \"a\" { policy = \"write\" }",
			[]string{"line 2", `namespace "a"`, "first on line 1"}},
		{"two node blocks", "node { policy = \"read\" }\nnode { policy = \"write\" }", []string{"line 2", "node", "first on line 1"}},
		{"a namespace that grants nothing", `namespace "a" {}`, []string{`namespace "a"`, "grants nothing"}},
		{"a policy that is a number", `namespace "a" { policy = 3 }`, []string{`namespace "a"`, "must be a string"}},
		{"capabilities that are a string", `namespace "a" { capabilities = "read-job" }`, []string{"must be a list"}},
		{"a function call", `namespace "a" { policy = lower("READ") }`, []string{"literal value"}},
		{"a variable", `namespace "a" { policy = var.p }`, []string{"literal value"}},
		{"empty rules", "  \n ", []string{"empty"}},
		{"rules with only a comment", "# nothing", []string{"no blocks"}},
		{"a variables path with a leading slash", "namespace \"a\" {\n variables {\n  path \"/x\" { capabilities = [\"read\"] }\n }\n}",
			[]string{`path "/x"`, "must not start with '/'"}},
		{"a variables capability that does not exist", "namespace \"a\" {\n variables {\n  path \"x\" { capabilities = [\"submit-job\"] }\n }\n}",
			[]string{`"submit-job"`, "variables path", "destroy"}},
		{"a syntax error", "namespace \"a\" {\n policy = \"read\"\n", []string{"line"}},
		{"malformed JSON", `{"namespace": `, []string{"line 1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.rules)
			if err == nil {
				t.Fatalf("Parse accepted %q", tc.rules)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q should mention %q", err, w)
				}
			}
		})
	}
}

func TestParseReportsEveryProblemAtOnce(t *testing.T) {
	_, err := Parse("namespace \"a\" { policy = \"x\" }\nnode { policy = \"y\" }\n")
	pe, ok := err.(*ParseError)
	if !ok || len(pe.Problems) != 2 {
		t.Fatalf("want both problems, got %#v", err)
	}
}

func TestParseBoundsTheRules(t *testing.T) {
	t.Run("rules over the size limit are refused before parsing", func(t *testing.T) {
		rules := `namespace "a" { policy = "read" }` + strings.Repeat(" ", MaxRulesSize)
		_, err := Parse(rules)
		if err == nil || !strings.Contains(err.Error(), "at most 32768 bytes") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("deep nesting is refused with its line", func(t *testing.T) {
		rules := "namespace \"a\" {\n policy = " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "\n}"
		_, err := Parse(rules)
		if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "at most 32 levels") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("more blocks than allowed are refused once", func(t *testing.T) {
		var b strings.Builder
		for i := 0; i < MaxBlocks+10; i++ {
			b.WriteString("namespace \"n")
			b.WriteString(strings.Repeat("x", i%5))
			b.WriteString(itoa(i))
			b.WriteString("\" { policy = \"read\" }\n")
		}
		_, err := Parse(b.String())
		pe, ok := err.(*ParseError)
		if !ok || len(pe.Problems) != 1 || !strings.Contains(pe.Problems[0], "at most 256 rule blocks") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a long chain of unary operators inside the size limit does not crash", func(t *testing.T) {
		rules := `namespace "a" { policy = ` + strings.Repeat("-", MaxRulesSize-40) + "1 }"
		if _, err := Parse(rules); err == nil {
			t.Fatal("a number is not a policy")
		}
	})
}

func requireSameSet(t *testing.T, got, want []string) {
	t.Helper()
	g := map[string]bool{}
	for _, s := range got {
		if g[s] {
			t.Errorf("%q listed twice in %v", s, got)
		}
		g[s] = true
	}
	w := map[string]bool{}
	for _, s := range want {
		w[s] = true
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// The policies shipped in examples/ parse, so the README's commands work.
func TestExamplePoliciesParse(t *testing.T) {
	files, err := filepath.Glob("../examples/acl-*.hcl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example policies found: %v", err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(string(src)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
