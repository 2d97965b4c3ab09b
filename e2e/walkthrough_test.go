//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

const singleMachine = `
server {
  enabled          = true
  bootstrap_expect = 1
}
client {
  enabled = true
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
`

func examplesDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "examples")
}

// The README's walkthrough, through the real CLI against a real agent
// process: run examples/web.hcl, read its status, reach the HTTP server it
// starts, read its logs, stop it.
func TestReadmeWalkthrough(t *testing.T) {
	a := newAgent(t, agentSpec{name: "dev", extra: singleMachine})
	a.waitOneReadyNode(t)

	out, code := a.cli("job", "run", filepath.Join(examplesDir(), "web.hcl"))
	if code != 0 {
		t.Fatalf("job run exited %d:\n%s", code, out)
	}
	if !strings.Contains(out, "Monitoring evaluation") || !strings.Contains(out, "created") {
		t.Fatalf("job run did not monitor the evaluation:\n%s", out)
	}

	var allocID string
	var port int
	waitFor(t, 30*time.Second, func() (bool, string) {
		stubs, _, err := a.api().Jobs().Allocations("web", false, nil)
		if err != nil || len(stubs) != 1 {
			return false, fmt.Sprintf("allocs %d (%v)", len(stubs), err)
		}
		alloc, _, err := a.api().Allocations().Info(stubs[0].ID, nil)
		if err != nil {
			return false, err.Error()
		}
		allocID = alloc.ID
		if alloc.AllocatedResources != nil {
			for _, p := range alloc.AllocatedResources.Shared.Ports {
				if p.Label == "http" {
					port = p.Value
				}
			}
		}
		return alloc.ClientStatus == "running" && port != 0, "alloc " + alloc.ClientStatus
	})

	out, code = a.cli("job", "status", "web")
	if code != 0 || !strings.Contains(out, "running") || !strings.Contains(out, allocID[:8]) {
		t.Fatalf("job status exited %d:\n%s", code, out)
	}

	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	waitFor(t, 30*time.Second, func() (bool, string) {
		resp, err := http.Get(url)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode == 200, resp.Status
	})

	// Python's server logs each request on stderr.
	waitFor(t, 15*time.Second, func() (bool, string) {
		out, code := a.cli("alloc", "logs", "-stderr", allocID)
		return code == 0 && strings.Contains(out, "GET / HTTP"), fmt.Sprintf("exit %d: %s", code, out)
	})

	out, code = a.cli("job", "stop", "web")
	if code != 0 {
		t.Fatalf("job stop exited %d:\n%s", code, out)
	}
	waitFor(t, 30*time.Second, func() (bool, string) {
		alloc, _, err := a.api().Allocations().Info(allocID, nil)
		if err != nil {
			return false, err.Error()
		}
		return alloc.ClientStatus == "complete" || alloc.ClientStatus == "failed", "alloc " + alloc.ClientStatus
	})
	if _, err := http.Get(url); err == nil {
		t.Fatal("the HTTP server still answers after the job stopped")
	}
}
