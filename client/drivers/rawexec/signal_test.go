package rawexec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/internal/testutil"
)

func TestSignalTaskDeliversWithoutStopping(t *testing.T) {
	d := New(nil, nil, true)
	defer d.Shutdown()
	got := filepath.Join(t.TempDir(), "got")
	// USR1, not HUP: a test run under nohup passes HUP ignored to the
	// shell, which then cannot trap it.
	// The loop sleeps in the foreground, briefly: a signal that lands
	// while the shell forks the next sleep runs the trap once that sleep
	// returns. (With a long sleep in the background and the wait
	// builtin, a signal landing between fork and wait left the trap
	// waiting for the sleep.)
	cfg, _ := taskConfig(t, `trap 'echo hup >> `+got+`' USR1; echo ready >> `+got+`; while :; do sleep 0.2; done`)
	if _, err := d.StartTask(cfg); err != nil {
		t.Fatal(err)
	}
	read := func() string { b, _ := os.ReadFile(got); return string(b) }
	testutil.WaitFor(t, "the trap to be set", func() bool { return strings.Contains(read(), "ready") })
	if err := d.SignalTask(cfg.ID, "usr1"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the trap to run", func() bool { return strings.Contains(read(), "hup") })
	if st, _ := d.InspectTask(cfg.ID); st.State != drivers.TaskStateRunning {
		t.Fatalf("state %s", st.State)
	}
	if err := d.SignalTask(cfg.ID, "SIGNOPE"); err == nil || !strings.Contains(err.Error(), "SIGNOPE") {
		t.Fatalf("unknown signal: %v", err)
	}
	if err := d.SignalTask("nope", "SIGHUP"); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("unknown task: %v", err)
	}
	if err := d.DestroyTask(cfg.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := d.SignalTask(cfg.ID, "SIGHUP"); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("destroyed task: %v", err)
	}
}
