//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// bridgeBenchAllocs is how many allocs TestBenchBridgeStart runs at once.
const bridgeBenchAllocs = 100

// TestBenchBridgeStart is the cost of bridge mode (a whole-machine run,
// only when DROVER_BENCH_TASKS is set): one job of 100 exec allocs on one
// agent, each with a dynamic port mapped to 8080, in host mode and then
// in bridge mode, timed from registration until every alloc runs and
// from deregistration until every one has stopped; in bridge mode also
// each alloc's network setup and teardown (as the client logs them,
// under the load of the other 99) at p50 and p99.
func TestBenchBridgeStart(t *testing.T) {
	if os.Getenv("DROVER_BENCH_TASKS") == "" {
		t.Skip("a whole-machine benchmark: run it with DROVER_BENCH_TASKS=1")
	}
	for _, mode := range []string{"host", "bridge"} {
		t.Run(mode, func(t *testing.T) { benchBridge(t, mode) })
	}
}

func benchBridge(t *testing.T, mode string) {
	if mode == "bridge" {
		skipUnlessBridge(t)
	}
	a := newAgent(t, agentSpec{name: "bench-" + mode, extra: "server {\n  enabled = true\n  bootstrap_expect = 1\n}\n" + bridgeClient("")})
	a.waitOneReadyNode(t)
	job := fmt.Sprintf(`
job "netbench" {
  group "g" {
    count = %d
    ephemeral_disk {
      size = 10
    }
    network {
      mode = %q
      port "http" {
        to = 8080
      }
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }
      logs {
        max_files     = 2
        max_file_size = 1
      }
      resources {
        cpu    = 5
        memory = 16
      }
    }
  }
}
`, bridgeBenchAllocs, mode)
	live := func() int { return liveAllocs(a, "netbench") }
	toRunning := runBenchJob(t, a, "netbench", job, bridgeBenchAllocs, live)
	stopBegin := time.Now()
	if _, _, err := a.api().Jobs().Deregister("netbench", false, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Minute, func() (bool, string) {
		n := live()
		return n == 0, fmt.Sprintf("%d allocs still live", n)
	})
	toStopped := time.Since(stopBegin)
	line := fmt.Sprintf("BENCH mode=%s allocs=%d register-to-all-running=%.2fs deregister-to-all-stopped=%.2fs",
		mode, bridgeBenchAllocs, toRunning.Seconds(), toStopped.Seconds())
	if mode == "bridge" {
		var setup, teardown []time.Duration
		waitFor(t, time.Minute, func() (bool, string) {
			setup, teardown = loggedDurations(a.log.String(), "alloc network set up"), loggedDurations(a.log.String(), "alloc network torn down")
			return len(setup) == bridgeBenchAllocs && len(teardown) == bridgeBenchAllocs, fmt.Sprintf("%d setups, %d teardowns logged", len(setup), len(teardown))
		})
		line += fmt.Sprintf(" setup-p50=%dms p99=%dms teardown-p50=%dms p99=%dms",
			pct(setup, 50).Milliseconds(), pct(setup, 99).Milliseconds(), pct(teardown, 50).Milliseconds(), pct(teardown, 99).Milliseconds())
	}
	t.Log(line)
}

var tookRE = regexp.MustCompile(`took=(\S+)`)

// loggedDurations are the took= values of the client's log lines with msg.
func loggedDurations(log, msg string) []time.Duration {
	var out []time.Duration
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, msg) {
			continue
		}
		if m := tookRE.FindStringSubmatch(l); m != nil {
			if d, err := time.ParseDuration(m[1]); err == nil {
				out = append(out, d)
			}
		}
	}
	slices.Sort(out)
	return out
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[(len(ds)-1)*p/100]
}
