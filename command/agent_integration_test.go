package command

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/command/agent"
	"github.com/drover-sched/drover/command/agent/agenttest"
	"github.com/drover-sched/drover/command/agent/config"
)

// These tests run the CLI against a real in-process agent rather than
// canned answers, to catch disagreements between what the CLI expects and
// what the agent's HTTP API actually sends.

func TestCLIAgainstAServerWithoutClients(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real agent")
	}
	serverOnly := func(c *config.Config) { c.Client.Enabled = false }
	skipWithoutAgent(t, serverOnly)
	ta := agenttest.New(t, serverOnly)
	addr := "-address=" + ta.URL
	path := writeJob(t, webJob)

	// No node can take the job: the run says why and exits 2, and the
	// job waits, queued, behind a blocked evaluation.
	res := runCLI(t, nil, "", "job", "run", addr, path)
	if res.code != 2 {
		t.Fatalf("job run: exit %d, want 2\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stdout, `Evaluation triggered by job "web"`, "failed to place all allocations",
		"No nodes were eligible for evaluation", "waiting for additional capacity")

	res = runCLI(t, nil, "", "job", "status", addr, "web")
	wantLines(t, res.stdout, "ID            = web", "Status        = pending", "Summary",
		"web         1       0         0        0       0         0     0", "Placement Failure", "No allocations placed")

	res = runCLI(t, nil, "", "job", "plan", addr, path)
	if res.code != 1 {
		t.Errorf("job plan: exit %d, want 1 (a placement)\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stdout, `Job: "web"`, "Scheduler dry-run:", "job run -check-index")

	res = runCLI(t, nil, "", "eval", "list", addr, "-status=blocked")
	wantLines(t, res.stdout, "queued-allocs  web")

	res = runCLI(t, nil, "", "job", "inspect", addr, "web")
	if err := jsonSubset(res.stdout, `{"Job":{"ID":"web","Type":"service","Version":0}}`); err != nil {
		t.Errorf("job inspect: %v", err)
	}

	res = runCLI(t, nil, "", "server", "members", addr)
	if res.code != 0 || !strings.Contains(res.stdout, "alive   true") {
		t.Errorf("server members: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, nil, "", "operator", "raft", "list-peers", addr)
	if res.code != 0 || !strings.Contains(res.stdout, "leader") {
		t.Errorf("raft peers: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}

	res = runCLI(t, nil, "", "job", "stop", addr, "web")
	if res.code != 0 {
		t.Fatalf("job stop: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stdout, `Monitoring evaluation`, `finished with status "complete"`)
	res = runCLI(t, nil, "", "job", "status", addr)
	if !strings.Contains(res.stdout, "(stopped)") && !strings.Contains(res.stdout, "dead") {
		t.Errorf("stopped job listed as\n%s", res.stdout)
	}
	if res := runCLI(t, nil, "", "system", "gc", addr); res.code != 0 {
		t.Errorf("system gc: exit %d %s", res.code, res.stderr)
	}
}

const batchJob = `
job "hello" {
  type = "batch"
  group "hello" {
    task "say" {
      driver = "mock_driver"
      config {
        run_for       = "1h"
        stdout_string = "hello from mock\n"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`

// TestCLIAgainstADevAgent runs a job on a real dev agent (server and
// client, mock driver). It skips while the agent cannot start a client.
func TestCLIAgainstADevAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real agent")
	}
	skipWithoutAgent(t, nil)
	ta := agenttest.New(t, nil)
	addr := "-address=" + ta.URL

	res := runCLI(t, nil, "", "job", "run", addr, writeJob(t, batchJob))
	if res.code != 0 {
		t.Fatalf("job run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stdout, `Allocation "`, `created: node "`, `group "hello"`, `finished with status "complete"`)

	client, err := api.NewClient(&api.Config{Address: ta.URL, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	allocID := waitForRunningAlloc(t, client, "hello")

	res = runCLI(t, nil, "", "alloc", "status", addr, allocID[:8])
	wantLines(t, res.stdout, "Client Status       = running", `Task "say" is "running"`, "Recent Events:", "Started")

	res = runCLI(t, nil, "", "node", "status", addr)
	wantLines(t, res.stdout, "ID", "ready")

	res = runCLI(t, nil, "", "alloc", "logs", addr, allocID)
	if !strings.Contains(res.stdout, "hello from mock") {
		t.Errorf("alloc logs: exit %d %q %q", res.code, res.stdout, res.stderr)
	}

	res = runCLI(t, nil, "", "job", "stop", addr, "hello")
	if res.code != 0 {
		t.Fatalf("job stop: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// skipWithoutAgent skips the test if the dev agent configured by cb cannot
// be started in this tree yet (the server or client is not wired in), so
// the tests start running by themselves once it can.
func skipWithoutAgent(t *testing.T, cb func(*config.Config)) {
	t.Helper()
	cfg := config.Dev()
	cfg.Ports = config.Ports{}
	cfg.DataDir = t.TempDir()
	if cb != nil {
		cb(cfg)
	}
	a, err := agent.NewAgent(cfg, hclog.NewNullLogger())
	if err != nil {
		t.Skipf("this agent cannot start in this build yet: %v", err)
	}
	if err := a.Shutdown(); err != nil {
		t.Fatalf("probe agent shutdown: %v", err)
	}
}

// waitForRunningAlloc waits, with blocking queries, until the job has a
// running allocation, and returns its ID.
func waitForRunningAlloc(t *testing.T, c *api.Client, jobID string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var index uint64
	for time.Now().Before(deadline) {
		allocs, qm, err := c.Jobs().Allocations(jobID, false, &api.QueryOptions{WaitIndex: index, WaitTime: 5 * time.Second})
		if err != nil {
			t.Fatalf("listing allocations: %v", err)
		}
		for _, a := range allocs {
			if a.ClientStatus == api.AllocClientStatusRunning {
				return a.ID
			}
		}
		index = qm.LastIndex
	}
	t.Fatalf("job %q has no running allocation after 30s", jobID)
	return ""
}
