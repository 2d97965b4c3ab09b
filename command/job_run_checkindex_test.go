package command

import (
	"strings"
	"testing"

	"github.com/drover-sched/drover/command/agent/agenttest"
)

// TestCLIJobRunCheckIndexAgainstADevAgent runs `job run -check-index` with
// a stale index against a real agent: the refusal is reported with the
// server's text, which starts as Nomad's does ("Enforcing job modify
// index"), so scripts written for Nomad's CLI recognise it, and the job
// is not updated.
func TestCLIJobRunCheckIndexAgainstADevAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real agent")
	}
	skipWithoutAgent(t, nil)
	ta := agenttest.New(t, nil)
	addr := "-address=" + ta.URL
	file := writeJob(t, webJob)
	if res := runCLI(t, nil, "", "job", "run", addr, "-detach", "-check-index=0", file); res.code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res := runCLI(t, nil, "", "job", "run", addr, "-detach", "-check-index=1", file)
	if res.code != 1 {
		t.Fatalf("stale -check-index: exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
	}
	lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "Enforcing job modify index 1: job exists with conflicting job modify index: ") ||
		lines[1] != "Job not updated" {
		t.Fatalf("stale -check-index: want Nomad's refusal then \"Job not updated\", got\n%s", res.stderr)
	}
}
