package command

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/command/agent/agenttest"
	"github.com/drover-sched/drover/command/agent/config"
)

// runCLIWithEnv is runCLI with environment variables the CLI reads.
func runCLIWithEnv(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	m := newMeta(&stdout, &stderr)
	m.stdin = strings.NewReader("")
	m.getenv = func(k string) string { return env[k] }
	m.environ = func() []string { return nil }
	m.now = func() time.Time { return testNow }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m.ctx = ctx
	code, ok := runVerbMeta(m, args)
	if !ok {
		t.Fatalf("%v is not a verb", args)
	}
	return result{code, stdout.String(), stderr.String()}
}

// The job verbs carry the token from -token, DROVER_TOKEN or NOMAD_TOKEN
// to an agent with ACLs on: with a token that may submit, a job runs and
// its logs are read; without one every verb is refused with the agent's
// 403 and the job is not there.
func TestJobCommandsCarryTheToken(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real agent")
	}
	cfg := func(c *config.Config) { c.ACL.Enabled = true }
	skipWithoutAgent(t, cfg)
	ta := agenttest.New(t, cfg)
	addr := "-address=" + ta.URL

	res := runCLI(t, nil, "", "acl", "bootstrap", addr)
	if res.code != 0 {
		t.Fatalf("bootstrap: exit %d: %s", res.code, res.stderr)
	}
	mgmt := "-token=" + secretOf(t, res.stdout)
	rules := filepath.Join(t.TempDir(), "app.hcl")
	if err := os.WriteFile(rules, []byte("namespace \"default\" {\n  policy = \"write\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, nil, "", "acl", "policy", "apply", addr, mgmt, "app", rules); res.code != 0 {
		t.Fatalf("policy apply: %s", res.stderr)
	}
	res = runCLI(t, nil, "", "acl", "token", "create", addr, mgmt, "-name=ci", "-policy=app")
	if res.code != 0 {
		t.Fatalf("token create: %s", res.stderr)
	}
	app := secretOf(t, res.stdout)
	path := writeJob(t, batchJob)

	res = runCLI(t, nil, "", "job", "run", addr, path)
	if res.code != 1 || !strings.Contains(res.stderr, "403") || !strings.Contains(res.stderr, "Permission denied") {
		t.Fatalf("job run without a token: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, nil, "", "job", "status", addr, "hello")
	if res.code != 1 || !strings.Contains(res.stderr, "Permission denied") {
		t.Fatalf("job status without a token: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}

	res = runCLI(t, nil, "", "job", "run", addr, "-token="+app, path)
	if res.code != 0 {
		t.Fatalf("job run with -token: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, env := range []string{"DROVER_TOKEN", "NOMAD_TOKEN"} {
		res = runCLIWithEnv(t, map[string]string{env: app}, "job", "status", addr, "hello")
		if res.code != 0 || !strings.Contains(res.stdout, "ID            = hello") {
			t.Fatalf("job status with %s: exit %d\n%s%s", env, res.code, res.stdout, res.stderr)
		}
	}
	client, err := api.NewClient(&api.Config{Address: ta.URL, SecretID: app, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	allocID := waitForRunningAlloc(t, client, "hello")
	res = runCLI(t, nil, "", "alloc", "logs", addr, "-token="+app, allocID)
	if !strings.Contains(res.stdout, "hello from mock") {
		t.Fatalf("alloc logs with -token: exit %d %q %q", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, nil, "", "alloc", "logs", addr, allocID)
	if res.code != 1 || !strings.Contains(res.stderr, "Permission denied") {
		t.Fatalf("alloc logs without a token: exit %d %q %q", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, nil, "", "job", "stop", addr, "-token="+app, "hello")
	if res.code != 0 {
		t.Fatalf("job stop with -token: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}
