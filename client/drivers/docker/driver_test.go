package docker

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers"
)

func TestStartRunsTheCommandWithEnvLabelsMountsAndLogs(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	tt := newTestTask(t, cli, shell(`echo "task=$NOMAD_TASK_NAME"; cat /local/hello; echo "pwd=$(pwd)"; echo oops >&2; touch /alloc/written`))
	tt.cfg.Config["work_dir"] = "/tmp"
	tt.cfg.Config["labels"] = []map[string]any{{"team": "storage"}}
	if err := os.WriteFile(filepath.Join(tt.cfg.TaskDir, "local", "hello"), []byte("from-local\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := start(t, d, tt)
	res := waitExit(t, d, tt.cfg.ID, 30*time.Second)
	if !res.Successful() {
		t.Fatalf("exit = %+v, want success", res)
	}
	tt.stdout.waitOutput(t, `want "task=web", "from-local" and "pwd=/tmp" lines`, func(s string) bool {
		return strings.Contains(s, "task=web\n") && strings.Contains(s, "from-local\n") && strings.Contains(s, "pwd=/tmp\n")
	})
	tt.stderr.waitOutput(t, `want "oops\n"`, func(s string) bool { return s == "oops\n" })
	if _, err := os.Stat(filepath.Join(tt.cfg.AllocDir, "alloc", "written")); err != nil {
		t.Errorf("/alloc is not the alloc dir: %v", err)
	}
	info := inspect(t, cli, h)
	for k, v := range map[string]string{LabelAllocID: tt.cfg.AllocID, LabelTaskName: "web", LabelJobName: "example", LabelTaskID: tt.cfg.ID, "team": "storage"} {
		if info.Config.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, info.Config.Labels[k], v)
		}
	}
	if !slices.Contains(info.Config.Env, "NOMAD_ALLOC_DIR=/alloc") {
		t.Errorf("env %v lacks the task's NOMAD_ALLOC_DIR", info.Config.Env)
	}
	wantBind := filepath.Join(tt.cfg.TaskDir, "secrets") + ":/secrets"
	if !slices.Contains(info.HostConfig.Binds, wantBind) {
		t.Errorf("binds %v lack %s", info.HostConfig.Binds, wantBind)
	}
	st, err := d.InspectTask(tt.cfg.ID)
	if err != nil || st.State != drivers.TaskStateExited || st.ExitResult.ExitCode != 0 {
		t.Errorf("InspectTask = %+v, %v; want exited 0", st, err)
	}
}

func TestExitCodeIsReported(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	tt := newTestTask(t, cli, shell("exit 3"))
	start(t, d, tt)
	res := waitExit(t, d, tt.cfg.ID, 30*time.Second)
	if res.ExitCode != 3 || res.OOMKilled || res.ExitUnknown {
		t.Fatalf("exit = %+v, want code 3", res)
	}
}

func TestEntrypointAndArgsReplaceTheImagesCommand(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	tt := newTestTask(t, cli, map[string]any{"entrypoint": []any{"/bin/echo", "entry"}, "args": []any{"a1", "a2"}})
	start(t, d, tt)
	if res := waitExit(t, d, tt.cfg.ID, 30*time.Second); !res.Successful() {
		t.Fatalf("exit = %+v", res)
	}
	tt.stdout.waitOutput(t, `want "entry a1 a2\n"`, func(s string) bool { return s == "entry a1 a2\n" })
}

func TestMemoryLimitKillsWithOOMKilled(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	// dd's 64 MiB block is touched as it is filled: well over 16 MB.
	tt := newTestTask(t, cli, shell("dd if=/dev/zero of=/dev/null bs=64M count=4"))
	tt.cfg.Resources.MemoryMB = 16
	began := time.Now()
	h := start(t, d, tt)
	res := waitExit(t, d, tt.cfg.ID, 60*time.Second)
	if !res.OOMKilled {
		t.Fatalf("exit = %+v, want OOMKilled", res)
	}
	if res.Successful() {
		t.Fatal("an OOM kill reported as success")
	}
	// What confirms an OOM kill when inspect lags behind the exit.
	if !d.sawOOMEvent(containerIDOf(t, h), began) {
		t.Fatal("the daemon's event log has no oom event for the container")
	}
}

func TestResourcesReachTheContainer(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	cases := []struct {
		name                  string
		res                   drivers.TaskResources
		config                map[string]any
		wantMemory, wantReser int64
	}{
		{"memory alone is the hard limit", drivers.TaskResources{CPUShares: 250, MemoryMB: 32}, nil, 32 << 20, 0},
		{"memory_max raises the limit and memory is the reservation", drivers.TaskResources{CPUShares: 250, MemoryMB: 32, MemoryMaxMB: 64}, nil, 64 << 20, 32 << 20},
		{"memory_hard_limit raises the limit", drivers.TaskResources{CPUShares: 250, MemoryMB: 32}, map[string]any{"memory_hard_limit": 48}, 48 << 20, 32 << 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := shell("sleep 30")
			for k, v := range c.config {
				cfg[k] = v
			}
			cfg["pids_limit"] = 50
			tt := newTestTask(t, cli, cfg)
			tt.cfg.Resources = c.res
			h := start(t, d, tt)
			info := inspect(t, cli, h)
			hc := info.HostConfig
			if hc.Memory != c.wantMemory || hc.MemoryReservation != c.wantReser || hc.MemorySwap != c.wantMemory {
				t.Errorf("memory = %d reservation = %d swap = %d, want %d %d %d", hc.Memory, hc.MemoryReservation, hc.MemorySwap, c.wantMemory, c.wantReser, c.wantMemory)
			}
			if hc.CPUShares != 250 {
				t.Errorf("cpu shares = %d, want 250", hc.CPUShares)
			}
			if hc.PidsLimit == nil || *hc.PidsLimit != 50 {
				t.Errorf("pids limit = %v, want 50", hc.PidsLimit)
			}
		})
	}
}

func TestStopSendsTheSignalThenKillsAfterTheTimeout(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	t.Run("a trapping task exits on the signal", func(t *testing.T) {
		tt := newTestTask(t, cli, shell(`trap 'echo got-usr2; exit 7' USR2; echo ready; sleep 300 & wait`))
		start(t, d, tt)
		waitFor(t, "the trap to be set", 20*time.Second, func() bool { return strings.Contains(tt.stdout.String(), "ready") })
		if err := d.StopTask(tt.cfg.ID, 30*time.Second, "SIGUSR2"); err != nil {
			t.Fatal(err)
		}
		res := waitExit(t, d, tt.cfg.ID, 30*time.Second)
		if res.ExitCode != 7 {
			t.Fatalf("exit = %+v, want 7 from the trap", res)
		}
		waitFor(t, "the trap's output", 10*time.Second, func() bool { return strings.Contains(tt.stdout.String(), "got-usr2") })
	})
	t.Run("a task ignoring the signal is killed after the timeout", func(t *testing.T) {
		// sh as pid 1 without a TERM handler does not die of TERM.
		tt := newTestTask(t, cli, shell(`echo ready; sleep 300 & wait`))
		start(t, d, tt)
		waitFor(t, "the task to run", 20*time.Second, func() bool { return strings.Contains(tt.stdout.String(), "ready") })
		began := time.Now()
		if err := d.StopTask(tt.cfg.ID, 500*time.Millisecond, ""); err != nil {
			t.Fatal(err)
		}
		res := waitExit(t, d, tt.cfg.ID, 30*time.Second)
		if res.ExitCode != 137 {
			t.Fatalf("exit = %+v, want 137 (killed)", res)
		}
		if time.Since(began) < 500*time.Millisecond {
			t.Fatalf("killed before the kill timeout")
		}
	})
}

func TestSignalTaskReachesTheTask(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	tt := newTestTask(t, cli, shell(`trap 'echo got-hup' HUP; echo ready; while true; do sleep 300 & wait; done`))
	start(t, d, tt)
	waitFor(t, "the trap to be set", 20*time.Second, func() bool { return strings.Contains(tt.stdout.String(), "ready") })
	if err := d.SignalTask(tt.cfg.ID, "HUP"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the trap's output", 10*time.Second, func() bool { return strings.Contains(tt.stdout.String(), "got-hup") })
	if st, _ := d.InspectTask(tt.cfg.ID); st.State != drivers.TaskStateRunning {
		t.Fatalf("a HUP the task traps stopped it: %+v", st)
	}
	if err := d.SignalTask(tt.cfg.ID, "SIGBOGUS"); err == nil || !strings.Contains(err.Error(), "SIGBOGUS") {
		t.Fatalf("an unknown signal: %v", err)
	}
}

func TestDestroyRemovesTheContainer(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	tt := newTestTask(t, cli, shell("sleep 300"))
	h, err := d.StartTask(tt.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.DestroyTask(tt.cfg.ID, false); err != drivers.ErrTaskRunning {
		t.Fatalf("destroy of a running task without force = %v, want ErrTaskRunning", err)
	}
	if err := d.DestroyTask(tt.cfg.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.ContainerInspect(t.Context(), containerIDOf(t, h)); err == nil {
		t.Fatal("the container is still there after DestroyTask")
	}
	if _, err := d.InspectTask(tt.cfg.ID); err == nil {
		t.Fatal("the driver still knows the destroyed task")
	}
}

func TestStatsReportMemoryCPUAndPids(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	tt := newTestTask(t, cli, shell(`sleep 300 & sleep 300 & echo ready; wait`))
	start(t, d, tt)
	waitFor(t, "the task to run", 20*time.Second, func() bool { return strings.Contains(tt.stdout.String(), "ready") })
	var u *drivers.TaskResourceUsage
	waitFor(t, "stats with three processes", 20*time.Second, func() bool {
		var err error
		u, err = d.TaskStats(tt.cfg.ID)
		if err != nil {
			t.Fatal(err)
		}
		return u.Pids == 3
	})
	if u.MemoryRSS == 0 || u.CPUTotalSeconds <= 0 || u.Timestamp.IsZero() {
		t.Fatalf("stats = %+v, want memory, CPU time and a timestamp", u)
	}
}

func TestRestartIsANewContainer(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	first := newTestTask(t, cli, shell("exit 1"))
	h1 := start(t, d, first)
	waitExit(t, d, first.cfg.ID, 30*time.Second)
	second := *first.cfg
	second.ID = first.cfg.AllocID + "/web/second1"
	h2 := start(t, d, &testTask{cfg: &second})
	if containerIDOf(t, h1) == containerIDOf(t, h2) {
		t.Fatal("a new attempt reused the old container")
	}
	if res := waitExit(t, d, second.ID, 30*time.Second); res.ExitCode != 1 {
		t.Fatalf("second attempt exit = %+v", res)
	}
}
