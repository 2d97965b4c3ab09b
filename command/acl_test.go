package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/drover-sched/drover/command/agent/agenttest"
	"github.com/drover-sched/drover/command/agent/config"
)

// secretOf pulls the Secret ID out of a printed token.
func secretOf(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^Secret ID\s+= (\S+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no Secret ID in\n%s", out)
	}
	return m[1]
}

func accessorOf(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^Accessor ID\s+= (\S+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no Accessor ID in\n%s", out)
	}
	return m[1]
}

// The acl verbs against a real agent with ACLs on: bootstrap, policies,
// tokens and the refusals a client token meets, in Nomad's output layout.
func TestACLCommandsAgainstAnAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real agent")
	}
	cfg := func(c *config.Config) { c.Client.Enabled = false; c.ACL.Enabled = true }
	skipWithoutAgent(t, cfg)
	ta := agenttest.New(t, cfg)
	addr := "-address=" + ta.URL

	res := runCLI(t, nil, "", "acl", "bootstrap", addr)
	if res.code != 0 {
		t.Fatalf("bootstrap: exit %d: %s", res.code, res.stderr)
	}
	wantLines(t, res.stdout, "Accessor ID  = ", "Secret ID    = ", "Name         = Bootstrap Token", "Type         = management",
		"Global       = true", "Create Time  = ", "Expiry Time  = <none>", "Create Index = ", "Modify Index = ", "Policies     = n/a", "Roles", "<none>")
	mgmt := "-token=" + secretOf(t, res.stdout)

	res = runCLI(t, nil, "", "acl", "bootstrap", addr)
	if res.code != 1 || !strings.Contains(res.stderr, "Error bootstrapping") || !strings.Contains(res.stderr, "ACL bootstrap already done (reset index: ") {
		t.Fatalf("second bootstrap: exit %d\n%s", res.code, res.stderr)
	}

	rules := filepath.Join(t.TempDir(), "readers.hcl")
	if err := os.WriteFile(rules, []byte("namespace \"default\" {\n  policy = \"read\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res = runCLI(t, nil, "", "acl", "policy", "apply", addr, mgmt, "-description=Read the default namespace", "readers", rules)
	if res.code != 0 || res.stdout != "Successfully wrote \"readers\" ACL policy!\n" {
		t.Fatalf("policy apply: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, nil, "node {\n  policy = \"write\"\n}\n", "acl", "policy", "apply", addr, mgmt, "ops", "-")
	if res.code != 0 {
		t.Fatalf("policy apply from stdin: exit %d\n%s", res.code, res.stderr)
	}
	res = runCLI(t, nil, "node {\n  policy = \"sudo\"\n}\n", "acl", "policy", "apply", addr, mgmt, "bad", "-")
	if res.code != 1 || !strings.Contains(res.stderr, `line 2: node: policy "sudo" is not valid; allowed: deny, read, write`) {
		t.Fatalf("a bad policy: exit %d\n%s", res.code, res.stderr)
	}
	res = runCLI(t, nil, "", "acl", "policy", "list", addr, mgmt)
	wantLines(t, res.stdout, "Name     Description", "ops", "readers  Read the default namespace")
	res = runCLI(t, nil, "", "acl", "policy", "info", addr, mgmt, "readers")
	wantLines(t, res.stdout, "Name        = readers", "Description = Read the default namespace", "CreateIndex = ", "ModifyIndex = ",
		"Rules", `namespace "default" {`)

	res = runCLI(t, nil, "", "acl", "token", "create", addr, mgmt, "-name=ci", "-policy=readers", "-ttl=2h")
	if res.code != 0 {
		t.Fatalf("token create: exit %d\n%s", res.code, res.stderr)
	}
	wantLines(t, res.stdout, "Name         = ci", "Type         = client", "Global       = false", "Policies     = [readers]")
	if strings.Contains(res.stdout, "Expiry Time  = <none>") {
		t.Fatalf("a token with -ttl must expire:\n%s", res.stdout)
	}
	ciSecret, ciAccessor := secretOf(t, res.stdout), accessorOf(t, res.stdout)
	ci := "-token=" + ciSecret

	res = runCLI(t, nil, "", "acl", "token", "self", addr, ci)
	wantLines(t, res.stdout, "Accessor ID  = "+ciAccessor, "Secret ID    = <hidden>", "Name         = ci")
	res = runCLI(t, nil, "", "acl", "token", "info", addr, mgmt, ciAccessor)
	wantLines(t, res.stdout, "Accessor ID  = "+ciAccessor, "Secret ID    = <hidden>")
	res = runCLI(t, nil, "", "acl", "token", "list", addr, mgmt)
	// Tokens are listed by accessor ID, which is random: check each row.
	wantLines(t, res.stdout, "Name             Type        Global  Accessor ID                           Expired")
	wantLines(t, res.stdout, "Bootstrap Token  management  true")
	wantLines(t, res.stdout, "ci               client      false   "+ciAccessor+"  false")

	res = runCLI(t, nil, "", "acl", "token", "update", addr, mgmt, "-name=ci-2", "-policy=readers", "-policy=ops", ciAccessor)
	if res.code != 0 {
		t.Fatalf("token update: exit %d\n%s", res.code, res.stderr)
	}
	wantLines(t, res.stdout, "Name         = ci-2", "Policies     = [ops readers]")
	res = runCLI(t, nil, "", "acl", "token", "self", addr, ci, "-json")
	var self struct{ Name, SecretID string }
	if err := json.Unmarshal([]byte(res.stdout), &self); err != nil || self.Name != "ci-2" || self.SecretID != "" {
		t.Fatalf("self -json after the update: %v %+v\n%s", err, self, res.stdout)
	}
	res = runCLI(t, nil, "", "acl", "token", "self", addr, ci, "-t", "{{.Name}}")
	if res.stdout != "ci-2\n" {
		t.Fatalf("self -t: %q", res.stdout)
	}

	t.Run("a client token is refused what needs management", func(t *testing.T) {
		for _, args := range [][]string{
			{"acl", "token", "list", addr, ci},
			{"acl", "policy", "apply", addr, ci, "x", rules},
			{"acl", "token", "create", addr, ci, "-type=management"},
		} {
			res := runCLI(t, nil, "", args...)
			if res.code != 1 || !strings.Contains(res.stderr, "403") || !strings.Contains(res.stderr, "Permission denied") {
				t.Errorf("%v: exit %d\n%s", args, res.code, res.stderr)
			}
		}
	})
	t.Run("the token comes from NOMAD_TOKEN too", func(t *testing.T) {
		var stdout, stderr strings.Builder
		m := newMeta(&stdout, &stderr)
		m.getenv = func(k string) string {
			if k == "NOMAD_TOKEN" {
				return ciSecret
			}
			return ""
		}
		if code, _ := runVerbMeta(m, []string{"acl", "token", "self", addr}); code != 0 || !strings.Contains(stdout.String(), ciAccessor) {
			t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
		}
	})

	res = runCLI(t, nil, "", "acl", "token", "delete", addr, mgmt, ciAccessor)
	if res.code != 0 || res.stdout != "Token "+ciAccessor+" successfully deleted\n" {
		t.Fatalf("token delete: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, nil, "", "acl", "token", "self", addr, ci)
	if res.code != 1 || !strings.Contains(res.stderr, "ACL token not found") {
		t.Fatalf("a deleted token: exit %d\n%s", res.code, res.stderr)
	}
	res = runCLI(t, nil, "", "acl", "policy", "delete", addr, mgmt, "ops")
	if res.code != 0 || res.stdout != "Successfully deleted \"ops\" ACL policy!\n" {
		t.Fatalf("policy delete: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

func TestACLCommandArguments(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"acl", "policy", "apply", "only-a-name"}, "two arguments"},
		{[]string{"acl", "token", "info"}, "one argument: <accessor_id>"},
		{[]string{"acl", "token", "create", "-role-name=r"}, "no ACL roles"},
		{[]string{"acl", "token", "list", "-json", "-t", "x"}, "Both -json and -t are not allowed"},
		{[]string{"acl", "policy", "apply", "p", "/does/not/exist"}, "Error reading the policy rules"},
	}
	for _, tc := range cases {
		res := runCLI(t, nil, "", tc.args...)
		if res.code != 1 || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%v: exit %d\n%s", tc.args, res.code, res.stderr)
		}
	}
	big := strings.Repeat("#", 40*1024)
	res := runCLI(t, nil, big, "acl", "policy", "apply", "p", "-")
	if res.code != 1 || !strings.Contains(res.stderr, "larger than 32768 bytes") {
		t.Fatalf("a huge policy: exit %d\n%s", res.code, res.stderr)
	}
}
