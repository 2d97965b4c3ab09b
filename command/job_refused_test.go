package command

import (
	"strings"
	"testing"

	"github.com/drover-sched/drover/command/agent/agenttest"
	"github.com/drover-sched/drover/command/agent/config"
)

// TestCLIRefusesAJobAsTheAgentDoes: against a real agent, job validate,
// job plan and job run all refuse a job whose driver config has a typo,
// with the agent's message naming the key and the key meant, and the run
// stores nothing.
func TestCLIRefusesAJobAsTheAgentDoes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real agent")
	}
	serverOnly := func(c *config.Config) { c.Client.Enabled = false }
	skipWithoutAgent(t, serverOnly)
	ta := agenttest.New(t, serverOnly)
	addr := "-address=" + ta.URL
	path := writeJob(t, `job "web" {
  datacenters = ["dc1"]
  group "web" {
    task "server" {
      driver = "exec"
      config {
        comand = "/bin/sleep"
        args   = ["60"]
      }
    }
  }
}
`)
	want := `group "web" task "server": driver "exec": unknown config key "comand"; did you mean "command"?`
	for _, verb := range []string{"validate", "plan", "run"} {
		res := runCLI(t, nil, "", "job", verb, addr, path)
		if res.code == 0 || !strings.Contains(res.stderr, want) {
			t.Errorf("job %s: exit %d, stderr %q, want a failure saying %q", verb, res.code, res.stderr, want)
		}
	}
	res := runCLI(t, nil, "", "job", "status", addr)
	if strings.Contains(res.stdout, "web") {
		t.Errorf("a refused job must not be stored; job status says\n%s", res.stdout)
	}
}

// TestJobValidateWithoutAnAgentAppliesTheSameRules: with no agent to ask,
// job validate checks the job here, with the agent's rules and words.
func TestJobValidateWithoutAnAgentAppliesTheSameRules(t *testing.T) {
	path := writeJob(t, `job "web" {
  group "web" {
    task "alloc" {
      driver = "raw_exec"
      config { comand = "/bin/true" }
    }
  }
}
`)
	res := runCLI(t, nil, "", "job", "validate", "-address=http://127.0.0.1:1", path)
	for _, want := range []string{
		"checked locally only: the agent could not be reached",
		`* group "web" task "alloc": task name "alloc" is reserved`,
		`* group "web" task "alloc": driver "raw_exec": unknown config key "comand"; did you mean "command"?`,
	} {
		if res.code != 1 || !strings.Contains(res.stderr, want) {
			t.Errorf("exit %d, stderr %q, want 1 and %q", res.code, res.stderr, want)
		}
	}
	res = runCLI(t, nil, "", "job", "validate", "-address=http://127.0.0.1:1", writeJob(t, webJob))
	if res.code != 0 || !strings.Contains(res.stdout, "Job validation successful (checked locally only") {
		t.Errorf("a valid job: exit %d %q %q", res.code, res.stdout, res.stderr)
	}
}
