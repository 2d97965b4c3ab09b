//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const batchJob = `
job "keepme" {
  type = "batch"
  group "g" {
    task "t" {
      driver = "mock"
      config {
        run_for = "1s"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`

// A single server started with a data dir elects itself, and after a
// restart still has what was submitted before.
func TestServerKeepsItsDataAcrossARestart(t *testing.T) {
	a := newAgent(t, agentSpec{name: "solo", extra: `
server {
  enabled          = true
  bootstrap_expect = 1
}`})
	waitForAgreedLeader(t, []*agent{a}, 30*time.Second, "")
	file := filepath.Join(t.TempDir(), "keepme.hcl")
	if err := os.WriteFile(file, []byte(batchJob), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := a.cli("job", "run", "-detach", file); code != 0 {
		t.Fatalf("job run exited %d:\n%s", code, out)
	}

	a.stop()
	a.start()
	waitForAgreedLeader(t, []*agent{a}, 30*time.Second, "")
	out, code := a.cli("job", "status", "keepme")
	if code != 0 || !strings.Contains(out, "keepme") || !strings.Contains(out, "batch") {
		t.Fatalf("the job submitted before the restart is gone (exit %d):\n%s", code, out)
	}
}
