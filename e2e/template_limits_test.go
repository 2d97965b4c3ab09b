//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/client/template"
	"github.com/drover-sched/drover/helper/childproc"
)

// A job's templates are programs run by the client agent. Against real
// agent processes: templates that grow without bound (doubling a string,
// one allocation of gigabytes) fail their task naming the memory limit
// while the client agent itself stays small, and a template that spins
// is killed as soon as its job is stopped, so its alloc ends and frees
// its resources. The real binary's render child also has its data
// segment capped, which race-enabled test binaries cannot show.
func TestTemplatesCannotBurnTheClientsCPUOrMemory(t *testing.T) {
	c := startFaultCluster(t, "c1")
	s, client := c.server, c.clients["c1"]

	for _, tc := range []struct{ id, data string }{
		{"doubling", `{{ $x := "xxxxxxxxxxxxxxxx" }}{{ range $i := loop 31 }}{{ $x = print $x $x }}{{ end }}`},
		{"one-allocation", `{{ indent 4000000000 "x" }}`},
	} {
		t.Run(tc.id, func(t *testing.T) {
			start := time.Now()
			registerJob(t, s, templateJob(tc.id, tc.data), 10*time.Second)
			alloc := waitForAllocStatus(t, s, tc.id, "failed", 30*time.Second)
			took := time.Since(start)
			ev := lastEvent(alloc, "Task hook failed")
			if ev == nil || ev.Details["limit"] != "memory" || !strings.Contains(ev.DisplayMessage, "rendering needed more than 256 MiB of memory") {
				t.Fatalf("want a Task hook failed event naming the memory limit, got %+v", alloc.TaskStates["t"])
			}
			// Writing 4 GB takes the child about 9 s here (and 4 GB); an
			// allocation the kernel refuses takes none.
			if took > 5*time.Second {
				t.Fatalf("failing the task took %v", took)
			}
		})
	}
	if rss := peakRSS(t, client.cmd.Process.Pid); rss > 300<<20 {
		t.Fatalf("the client agent's peak memory is %d MiB", rss>>20)
	}

	registerJob(t, s, templateJob("spin", `{{ range 1000000000000 }}{{ end }}`), 10*time.Second)
	waitFor(t, 30*time.Second, func() (bool, string) {
		n := renderChildrenOf(client.cmd.Process.Pid)
		return n == 1, fmt.Sprintf("%d render children", n)
	})
	stopped := time.Now()
	if _, _, err := s.api().Jobs().Deregister("spin", false, nil); err != nil {
		t.Fatal(err)
	}
	alloc := waitForAllocStatus(t, s, "spin", "complete", 15*time.Second)
	t.Logf("the spinning template's alloc was %s %v after its job was stopped", alloc.ClientStatus, time.Since(stopped))
	if n := renderChildrenOf(client.cmd.Process.Pid); n != 0 {
		t.Fatalf("%d render children outlived the stopped job", n)
	}
}

// templateJob is a batch job whose task fails for good at its first
// failed start, with one template.
func templateJob(id, data string) string {
	return fmt.Sprintf(`
job %q {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
      template {
        data        = %q
        destination = "local/out"
      }
    }
  }
}
`, id, data)
}

// waitForAllocStatus waits until the job's one alloc has the client
// status, and returns it.
func waitForAllocStatus(t *testing.T, s *agent, jobID, status string, timeout time.Duration) *api.Allocation {
	t.Helper()
	var alloc *api.Allocation
	waitFor(t, timeout, func() (bool, string) {
		allocs, err := jobAllocs(s, jobID)
		if err != nil {
			return false, err.Error()
		}
		if len(allocs) != 1 || allocs[0].ClientStatus != status {
			return false, describeAllocs(allocs)
		}
		alloc = allocs[0]
		return true, ""
	})
	return alloc
}

func lastEvent(a *api.Allocation, typ string) *api.TaskEvent {
	ts := a.TaskStates["t"]
	if ts == nil {
		return nil
	}
	for i := len(ts.Events) - 1; i >= 0; i-- {
		if ts.Events[i].Type == typ {
			return ts.Events[i]
		}
	}
	return nil
}

// peakRSS is a process's peak resident memory (VmHWM).
func peakRSS(t *testing.T, pid int) uint64 {
	t.Helper()
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// renderChildrenOf counts pid's children that render templates (their
// argv[0] names the entry).
func renderChildrenOf(pid int) int {
	return childproc.Running(pid, template.RenderEntry)
}
