package acl

import "testing"

// compile parses and compiles rules, failing the test on a bad policy.
func compile(t *testing.T, rules ...string) *ACL {
	t.Helper()
	a, err := Compile(false, rules...)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return a
}

func TestNamespaceOperations(t *testing.T) {
	cases := []struct {
		name     string
		policies []string
		ns, op   string
		want     bool
	}{
		{"read allows reading a job", []string{`namespace "default" { policy = "read" }`}, "default", "read-job", true},
		{"read does not allow submitting", []string{`namespace "default" { policy = "read" }`}, "default", "submit-job", false},
		{"write allows submitting", []string{`namespace "default" { policy = "write" }`}, "default", "submit-job", true},
		{"write does not allow node exec", []string{`namespace "default" { policy = "write" }`}, "default", "alloc-node-exec", false},
		{"a rule for one namespace says nothing of another", []string{`namespace "default" { policy = "write" }`}, "prod", "read-job", false},
		{"no policy allows nothing", nil, "default", "list-jobs", false},
		{"an unknown capability is never allowed", []string{`namespace "default" { policy = "write" }`}, "default", "rule-the-world", false},
		{"asking for deny is never allowed", []string{`namespace "default" { policy = "deny" }`}, "default", "deny", false},
		{"policies add up across tokens' policies", []string{
			`namespace "default" { policy = "read" }`,
			`namespace "default" { capabilities = ["read-logs"] }`,
		}, "default", "read-logs", true},
		{"deny in one policy beats write in another", []string{
			`namespace "default" { policy = "write" }`,
			`namespace "default" { policy = "deny" }`,
		}, "default", "read-job", false},
		{"deny beats write whichever comes first", []string{
			`namespace "default" { policy = "deny" }`,
			`namespace "default" { policy = "write" }`,
		}, "default", "read-job", false},
		{"a star glob covers every namespace", []string{`namespace "*" { policy = "read" }`}, "anything", "read-job", true},
		{"an exact rule beats a glob, even a denying one", []string{
			`namespace "*" { policy = "deny" }`,
			`namespace "dev" { policy = "write" }`,
		}, "dev", "submit-job", true},
		{"the closest glob wins over a broader one", []string{
			`namespace "*" { policy = "write" }`,
			`namespace "prod-*" { policy = "read" }`,
		}, "prod-api", "submit-job", false},
		{"a broader glob still applies where the closer one does not match", []string{
			`namespace "*" { policy = "write" }`,
			`namespace "prod-*" { policy = "read" }`,
		}, "dev-api", "submit-job", true},
		{"a glob in the middle matches", []string{`namespace "team-*-prod" { policy = "write" }`}, "team-a-prod", "dispatch-job", true},
		{"a glob does not match what it does not cover", []string{`namespace "team-*-prod" { policy = "write" }`}, "team-a-dev", "read-job", false},
		{"all namespaces is allowed if any namespace allows it", []string{`namespace "dev" { policy = "write" }`}, "*", "submit-job", true},
		{"all namespaces is refused if no namespace allows it", []string{`namespace "dev" { policy = "read" }`}, "*", "submit-job", false},
		{"scale allows scaling but not submitting", []string{`namespace "default" { policy = "scale" }`}, "default", "scale-job", true},
		{"scale does not allow submitting", []string{`namespace "default" { policy = "scale" }`}, "default", "submit-job", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := compile(t, tc.policies...)
			if got := a.AllowNamespaceOperation(tc.ns, tc.op); got != tc.want {
				t.Fatalf("AllowNamespaceOperation(%q, %q) = %v, want %v", tc.ns, tc.op, got, tc.want)
			}
		})
	}
}

func TestAllowNamespace(t *testing.T) {
	cases := []struct {
		name     string
		policies []string
		ns       string
		want     bool
	}{
		{"a read rule makes the namespace visible", []string{`namespace "a" { policy = "read" }`}, "a", true},
		{"a deny rule hides it", []string{`namespace "a" { policy = "deny" }`}, "a", false},
		{"an empty capability list grants nothing", []string{`namespace "a" { capabilities = [] }`}, "a", false},
		{"an unmentioned namespace is hidden", []string{`namespace "a" { policy = "read" }`}, "b", false},
		{"all namespaces is visible if one is", []string{`namespace "a" { policy = "read" }`, `namespace "b" { policy = "deny" }`}, "*", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := compile(t, tc.policies...).AllowNamespace(tc.ns); got != tc.want {
				t.Fatalf("AllowNamespace(%q) = %v, want %v", tc.ns, got, tc.want)
			}
		})
	}
}

func TestCoarseRules(t *testing.T) {
	type allows struct{ nodeR, nodeW, agentR, agentW, opR, opW bool }
	cases := []struct {
		name     string
		policies []string
		want     allows
	}{
		{"no rules allow nothing", nil, allows{}},
		{"read allows reading only", []string{`node { policy = "read" }`, `agent { policy = "read" }`, `operator { policy = "read" }`},
			allows{nodeR: true, agentR: true, opR: true}},
		{"write allows reading and writing", []string{`node { policy = "write" }`, `agent { policy = "write" }`, `operator { policy = "write" }`},
			allows{true, true, true, true, true, true}},
		{"the most privileged rule wins", []string{`node { policy = "read" }`, `node { policy = "write" }`},
			allows{nodeR: true, nodeW: true}},
		{"deny beats write", []string{`node { policy = "write" }`, `node { policy = "deny" }`, `agent { policy = "read" }`},
			allows{agentR: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := compile(t, tc.policies...)
			got := allows{a.AllowNodeRead(), a.AllowNodeWrite(), a.AllowAgentRead(), a.AllowAgentWrite(), a.AllowOperatorRead(), a.AllowOperatorWrite()}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestOtherBlocks(t *testing.T) {
	a := compile(t,
		`node_pool "gpu-*" { policy = "read" }`,
		`host_volume "ssd" { policy = "write" }`,
		`plugin { policy = "list" }`,
		`quota { policy = "read" }`,
		"operator {\n policy = \"read\"\n capabilities = [\"snapshot-save\"]\n}",
	)
	checks := []struct {
		name string
		got  bool
		want bool
	}{
		{"a node pool glob allows reading a matching pool", a.AllowNodePoolOperation("gpu-a", "read"), true},
		{"a read node pool rule does not allow writing it", a.AllowNodePoolOperation("gpu-a", "write"), false},
		{"a write host volume rule allows mounting it read-write", a.AllowHostVolumeOperation("ssd", "mount-readwrite"), true},
		{"a host volume rule says nothing of another volume", a.AllowHostVolumeOperation("hdd", "mount-readonly"), false},
		{"a list plugin rule allows listing", a.AllowPluginList(), true},
		{"a list plugin rule does not allow reading", a.AllowPluginRead(), false},
		{"a read quota rule allows reading quotas", a.AllowQuotaRead(), true},
		{"a read quota rule does not allow writing them", a.AllowQuotaWrite(), false},
		{"an operator capability is granted beside a read policy", a.AllowOperatorOperation("snapshot-save"), true},
		{"the read policy alone does not make the operator a writer", a.AllowOperatorWrite(), false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v", c.name, c.got)
		}
	}
}

func TestManagementAndDisabledAllowEverything(t *testing.T) {
	for name, a := range map[string]*ACL{"management": NewACL(true, nil), "nil (ACLs disabled)": nil} {
		t.Run(name, func(t *testing.T) {
			ok := a.IsManagement() && a.AllowNamespaceOperation("any", "alloc-node-exec") && a.AllowNamespace("x") &&
				a.AllowNodeWrite() && a.AllowAgentWrite() && a.AllowOperatorWrite() && a.AllowNodePoolOperation("p", "delete") &&
				a.AllowHostVolumeOperation("v", "mount-readwrite") && a.AllowPluginRead() && a.AllowQuotaWrite() &&
				a.AllowOperatorOperation("snapshot-save") && a.AllowNamespaceAny("x", "register-job")
			if !ok {
				t.Fatal("must allow everything")
			}
		})
	}
	if compile(t, `namespace "*" { policy = "write" }`).IsManagement() {
		t.Fatal("a client policy is not management")
	}
}

func TestAllowNamespaceAnyAcceptsTheFinerCapability(t *testing.T) {
	a := compile(t, `namespace "default" { capabilities = ["register-job"] }`)
	if !a.AllowNamespaceAny("default", "submit-job", "register-job") {
		t.Fatal("register-job alone must satisfy an endpoint that accepts it")
	}
	if a.AllowNamespaceAny("default", "submit-job") {
		t.Fatal("register-job does not grant submit-job")
	}
}
