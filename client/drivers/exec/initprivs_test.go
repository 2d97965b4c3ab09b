package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/executor"
)

// awaitStarted holds a task's script until the test has seen StartTask
// return (startedTask), by which time the init has shed what it held for
// the fork: a task reading the init at once could catch it in between.
const awaitStarted = `while [ ! -e /local/started ]; do sleep 0.01; done
`

// startedTask starts cfg and, once StartTask has returned, lets a script
// that begins with awaitStarted go on.
func startedTask(t *testing.T, d *executor.Driver, cfg *drivers.TaskConfig) {
	t.Helper()
	start(t, d, cfg)
	if err := os.WriteFile(filepath.Join(cfg.TaskDir, "local", "started"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// initProbe prints, for every thread of the init (pid 1), its uid and
// capabilities, and whether its environment can be read.
const initProbe = awaitStarted + `for s in /proc/1/task/*/status; do grep -E '^(Uid|CapPrm|CapEff):' $s; done
cat /proc/1/environ >/dev/null 2>&1 && echo "init-environ-readable"
echo done`

// Once the task runs, the init holds nothing a task that reached it
// could use: a non-root task's init is the task's uid with no
// capabilities on any thread, and nobody may read its memory.
func TestTheInitKeepsNoPrivilegesOnceTheTaskRuns(t *testing.T) {
	needRoot(t)
	d := newDriver(t)
	cfg, stdout, stderr := testTask(t, initProbe)
	startedTask(t, d, cfg)
	if res := waitExit(t, d, cfg.ID); !res.Successful() {
		t.Fatalf("exit %+v, stderr %q", res, stderr.String())
	}
	waitOutput(t, stdout, "done")
	out := stdout.String()
	if strings.Contains(out, "init-environ-readable") {
		t.Errorf("the task reads the init's environment:\n%s", out)
	}
	threads := 0
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Uid":
			threads++
			if strings.Trim(strings.ReplaceAll(v, "65534", ""), "\t ") != "" {
				t.Errorf("an init thread's uids are %q, want the task's 65534", v)
			}
		case "CapPrm", "CapEff":
			if v != "0000000000000000" {
				t.Errorf("an init thread holds %s %s", k, v)
			}
		}
	}
	if threads == 0 {
		t.Fatalf("no init thread seen:\n%s", out)
	}
}

// A root task's init keeps uid 0 and CAP_KILL only (on its main thread
// at least; on every thread where the build has no cgo).
func TestARootTasksInitKeepsOnlyKill(t *testing.T) {
	needRoot(t)
	d := newRootDriver(t)
	cfg, stdout, stderr := testTask(t, awaitStarted+`grep -E '^(CapPrm|CapEff):' /proc/1/status; echo done`)
	cfg.User = "root"
	startedTask(t, d, cfg)
	if res := waitExit(t, d, cfg.ID); !res.Successful() {
		t.Fatalf("exit %+v, stderr %q", res, stderr.String())
	}
	waitOutput(t, stdout, "done")
	for _, want := range []string{"CapPrm:\t0000000000000020", "CapEff:\t0000000000000020"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("init lacks %q:\n%s", want, stdout.String())
		}
	}
}
