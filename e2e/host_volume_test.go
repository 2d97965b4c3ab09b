//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// hostVolumeMachine is a server and client whose client offers one host
// volume, "shared", at dir.
func hostVolumeMachine(dir string) string {
	return fmt.Sprintf(`
server {
  enabled          = true
  bootstrap_expect = 1
}
client {
  enabled = true
  host_volume "shared" {
    path = %q
  }
}
`, dir)
}

// volumeJob is version v of a service job whose exec task mounts the
// host volume "shared" at /data, prints what the previous version left
// there, leaves its own mark and stays up.
func volumeJob(v int) string {
	script := fmt.Sprintf(`echo "found=$(cat /data/note 2>/dev/null || echo nothing)"; echo v%d > /data/note; echo wrote; exec sleep 3600`, v)
	return fmt.Sprintf(`
job "keeper" {
  group "g" {
    volume "data" {
      type   = "host"
      source = "shared"
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", %q]
      }
      env {
        VERSION = "%d"
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`, script, v)
}

// runningOutput waits for the job's one running allocation of version v
// and returns its stdout once the task has written its mark.
func runningOutput(t *testing.T, a *agent, v uint64) string {
	t.Helper()
	var alloc *api.Allocation
	waitFor(t, 60*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(a, "keeper")
		if err != nil {
			return false, err.Error()
		}
		for _, al := range allocs {
			if al.ClientStatus == "running" && al.Job != nil && al.Job.Version != nil && *al.Job.Version == v {
				alloc = al
				return true, ""
			}
		}
		return false, describeAllocs(allocs)
	})
	var out string
	waitFor(t, 30*time.Second, func() (bool, string) {
		out = logOf(a, alloc.ID, "alloc/logs/t.stdout.0")
		return strings.Contains(out, "wrote"), "stdout so far: " + out
	})
	return out
}

// A host volume outlives its allocations: what version 0 of a job writes
// into it, version 1 (a new allocation) reads, and the file is on the
// host path. node status -verbose lists the volume.
func TestHostVolumeDataOutlivesTheAllocation(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, agentSpec{name: "vol", extra: hostVolumeMachine(dir)})
	nodeID := a.waitOneReadyNode(t)

	out, code := a.cli("node", "status", "-verbose", nodeID)
	if code != 0 || !strings.Contains(out, "Host Volumes") || !strings.Contains(out, dir) {
		t.Fatalf("node status -verbose does not list the host volume (exit %d):\n%s", code, out)
	}

	registerJob(t, a, volumeJob(0), 30*time.Second)
	if out := runningOutput(t, a, 0); !strings.Contains(out, "found=nothing") {
		t.Fatalf("version 0 found something in a fresh volume:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "note")); err != nil || string(b) != "v0\n" {
		t.Fatalf("version 0's file is not on the host path: %q, %v", b, err)
	}
	registerJob(t, a, volumeJob(1), 30*time.Second)
	if out := runningOutput(t, a, 1); !strings.Contains(out, "found=v0") {
		t.Fatalf("version 1 did not read what version 0 wrote:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "note")); err != nil || string(b) != "v1\n" {
		t.Fatalf("version 1's file is not on the host path: %q, %v", b, err)
	}
}

// A job asking for a host volume no node has is not placed, and its
// evaluation says which volume is missing.
func TestJobAskingForAMissingHostVolumeIsNotPlacedAndSaysWhy(t *testing.T) {
	a := newAgent(t, agentSpec{name: "novol", extra: hostVolumeMachine(t.TempDir())})
	a.waitOneReadyNode(t)
	job := strings.Replace(volumeJob(0), `source = "shared"`, `source = "nowhere"`, 1)
	registerJob(t, a, job, 30*time.Second)

	const reason = `missing host volume "nowhere"`
	var evals []*api.Evaluation
	waitFor(t, 30*time.Second, func() (bool, string) {
		var err error
		evals, _, err = a.api().Jobs().Evaluations("keeper", nil)
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evals {
			if m := e.FailedTGAllocs["g"]; m != nil && m.ConstraintFiltered[reason] == 1 {
				return true, ""
			}
		}
		return false, describeEvals(a, "keeper")
	})
	allocs, err := jobAllocs(a, "keeper")
	if err != nil || len(allocs) != 0 {
		t.Fatalf("allocs %s (%v), want none", describeAllocs(allocs), err)
	}
	// job status quotes the reason, as Nomad's does.
	out, _ := a.cli("job", "status", "keeper")
	if !strings.Contains(out, fmt.Sprintf("%q: 1 node excluded by filter", reason)) {
		t.Fatalf("job status does not say why the job is not placed:\n%s", out)
	}
}
