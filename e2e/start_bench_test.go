//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/testutil/wait"
)

// benchTasks is how many tasks TestBenchTaskStart starts at once.
const benchTasks = 300

const benchMachine = `
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

// TestBenchTaskStart is the benchmark of what isolation costs (`make
// bench-tasks`, like bench-cluster a whole-machine run, so it only runs
// when DROVER_BENCH_TASKS is set): one job of 300 tasks on one agent, for
// raw_exec and then exec, timed from registration until every task runs
// and from deregistration until every alloc has stopped, with each task's
// start latency (alloc created to task started) at p50 and p99.
func TestBenchTaskStart(t *testing.T) {
	if os.Getenv("DROVER_BENCH_TASKS") == "" {
		t.Skip("a whole-machine benchmark: run it with make bench-tasks")
	}
	for _, driver := range []string{"raw_exec", "exec"} {
		t.Run(driver, func(t *testing.T) { benchStart(t, driver) })
	}
}

func benchStart(t *testing.T, driver string) {
	a := newAgent(t, agentSpec{name: "bench", extra: benchMachine})
	a.waitOneReadyNode(t)
	config := `
        command = "/bin/sleep"
        args    = ["3600"]`
	toRunning := runBenchJob(t, a, "start", benchJobHCL("start", driver, config, benchTasks, 16), benchTasks,
		func() int { return liveAllocs(a, "start") })
	allocs, err := jobAllocs(a, "start")
	if err != nil {
		t.Fatal(err)
	}
	var lat []time.Duration
	for _, al := range allocs {
		if st := al.TaskStates["t"]; st != nil && !st.StartedAt.IsZero() {
			lat = append(lat, st.StartedAt.Sub(time.Unix(0, al.CreateTime)))
		}
	}
	slices.Sort(lat)
	if len(lat) != benchTasks {
		t.Fatalf("%d tasks have a start time, want %d", len(lat), benchTasks)
	}
	stopBegin := time.Now()
	if _, _, err := a.api().Jobs().Deregister("start", false, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Minute, func() (bool, string) {
		live := liveAllocs(a, "start")
		return live == 0, fmt.Sprintf("%d allocs still live", live)
	})
	toStopped := time.Since(stopBegin)
	t.Logf("BENCH driver=%s tasks=%d register-to-all-running=%.2fs start-latency-p50=%dms p99=%dms deregister-to-all-stopped=%.2fs",
		driver, benchTasks, toRunning.Seconds(), lat[len(lat)/2].Milliseconds(), lat[len(lat)*99/100].Milliseconds(), toStopped.Seconds())
}

// benchJobHCL is job id of n tasks of driver, each with config as its
// config block's body, small enough that 300 fit one node.
func benchJobHCL(id, driver, config string, n, memoryMB int) string {
	return fmt.Sprintf(`
job %q {
  group "g" {
    count = %d
    # 300 of the default 300 MB disks would not fit every machine's disk.
    ephemeral_disk {
      size = 10
    }
    task "t" {
      driver = %q
      config {%s
      }
      logs {
        max_files     = 2
        max_file_size = 1
      }
      resources {
        cpu    = 5
        memory = %d
      }
    }
  }
}
`, id, n, driver, config, memoryMB)
}

// runBenchJob registers the job id of jobHCL and returns how long it took
// until n of its tasks ran. The agent leaves its tasks running when it
// stops (a restarted client re-attaches to them), so the job is purged at
// cleanup, even when the run fails, until left reports nothing left.
func runBenchJob(t *testing.T, a *agent, id, jobHCL string, n int, left func() int) time.Duration {
	t.Helper()
	parsed, err := a.api().Jobs().ParseHCL(jobHCL, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _, _ = a.api().Jobs().Deregister(id, true, nil)
		wait.Holds(2*time.Minute, func() bool { return left() == 0 }, wait.Every(200*time.Millisecond))
	})
	begin := time.Now()
	if _, _, err := a.api().Jobs().Register(parsed, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Minute, func() (bool, string) {
		sum, _, err := a.api().Jobs().Summary(id, nil)
		if err != nil || sum.Summary["g"].Running < n {
			return false, fmt.Sprintf("summary %+v (%v)", sum, err)
		}
		return true, ""
	})
	return time.Since(begin)
}

// liveAllocs counts the job's allocs whose tasks may still run (-1 when
// the agent does not answer).
func liveAllocs(a *agent, jobID string) int {
	allocs, err := jobAllocs(a, jobID)
	if err != nil {
		return -1
	}
	live := 0
	for _, al := range allocs {
		if al.ClientStatus == "running" || al.ClientStatus == "pending" {
			live++
		}
	}
	return live
}
