//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A machine whose server collects garbage within seconds, and whose client
// would keep finished alloc directories for an hour on its own.
const shortGCMachine = `
server {
  enabled                 = true
  bootstrap_expect        = 1
  eval_gc_threshold       = "2s"
  batch_eval_gc_threshold = "2s"
  job_gc_threshold        = "2s"
  eval_gc_interval        = "1s"
  job_gc_interval         = "1s"
}
client {
  enabled     = true
  gc_interval = "1h"
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
`

const finishingBatchJob = `
job "finish" {
  type = "batch"
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo done"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`

// A finished batch job's evals, allocs and the job itself disappear on
// their own, without `system gc`, once they pass the thresholds of the
// agent config; the client removes the alloc's directory as soon as the
// servers have collected it, long before its own GC interval.
func TestFinishedBatchJobIsCollectedWithoutForcing(t *testing.T) {
	a := newAgent(t, agentSpec{name: "gc", extra: shortGCMachine})
	a.waitOneReadyNode(t)
	file := filepath.Join(t.TempDir(), "finish.hcl")
	if err := os.WriteFile(file, []byte(finishingBatchJob), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := a.cli("job", "run", "-detach", file); code != 0 {
		t.Fatalf("job run exited %d:\n%s", code, out)
	}

	var allocID string
	var evalIDs []string
	waitFor(t, 30*time.Second, func() (bool, string) {
		stubs, _, err := a.api().Jobs().Allocations("finish", true, nil)
		if err != nil || len(stubs) != 1 {
			return false, fmt.Sprintf("allocs %d (%v)", len(stubs), err)
		}
		allocID = stubs[0].ID
		return stubs[0].ClientStatus == "complete", "alloc " + stubs[0].ClientStatus
	})
	evals, _, err := a.api().Jobs().Evaluations("finish", nil)
	if err != nil || len(evals) == 0 {
		t.Fatalf("the job's evals: %d (%v)", len(evals), err)
	}
	for _, e := range evals {
		evalIDs = append(evalIDs, e.ID)
	}
	allocDir := filepath.Join(a.dir, "data", "client", "alloc", allocID)
	if _, err := os.Stat(allocDir); err != nil {
		t.Fatalf("the finished alloc's directory should exist until the servers collect it: %v", err)
	}

	waitFor(t, 60*time.Second, func() (bool, string) {
		if _, _, err := a.api().Jobs().Info("finish", nil); err == nil || !strings.Contains(err.Error(), "404") {
			return false, fmt.Sprintf("the job is still there (%v)", err)
		}
		if _, _, err := a.api().Allocations().Info(allocID, nil); err == nil || !strings.Contains(err.Error(), "404") {
			return false, fmt.Sprintf("alloc %s is still there (%v)", allocID, err)
		}
		for _, id := range evalIDs {
			if _, _, err := a.api().Evaluations().Info(id, nil); err == nil || !strings.Contains(err.Error(), "404") {
				return false, fmt.Sprintf("eval %s is still there (%v)", id, err)
			}
		}
		return true, ""
	})
	waitFor(t, 30*time.Second, func() (bool, string) {
		_, err := os.Stat(allocDir)
		return errors.Is(err, os.ErrNotExist), fmt.Sprintf("alloc dir %s: %v", allocDir, err)
	})
}
