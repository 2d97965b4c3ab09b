package rawexec

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/helper/clock"
)

// taskConfig makes a task running `sh -c script` with FIFOs for its output;
// the returned function reads everything written to stdout once the task
// and every process holding the FIFO have exited.
func taskConfig(t *testing.T, script string) (*drivers.TaskConfig, func() string) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "stdout.fifo")
	errp := filepath.Join(dir, "stderr.fifo")
	for _, p := range []string{out, errp} {
		if err := unix.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Read end first, as the task runner does.
	r, err := os.OpenFile(out, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	re, err := os.OpenFile(errp, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); re.Close() })
	got := make(chan string, 1)
	started := make(chan struct{})
	go func() {
		<-started
		b, _ := io.ReadAll(r)
		got <- string(b)
	}()
	cfg := &drivers.TaskConfig{
		ID: "alloc1/web/" + strconv.Itoa(int(time.Now().UnixNano())), AllocID: "alloc1", TaskName: "web",
		Config: map[string]any{"command": "/bin/sh", "args": []any{"-c", script}},
		Env:    map[string]string{"PATH": "/usr/bin:/bin", "GREETING": "hello"},
		Dir:    dir, TaskDir: dir, StdoutPath: out, StderrPath: errp,
	}
	return cfg, func() string {
		close(started)
		select {
		case s := <-got:
			return s
		case <-time.After(10 * time.Second):
			t.Fatal("stdout was never closed")
			return ""
		}
	}
}

func waitExit(t *testing.T, d drivers.Driver, id string) *drivers.ExitResult {
	t.Helper()
	ch, err := d.WaitTask(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-ch:
		return res
	case <-time.After(10 * time.Second):
		t.Fatal("task did not exit")
		return nil
	}
}

func TestRawExecRunsCommandWithEnvAndReportsExitCode(t *testing.T) {
	d := New(nil, nil, true)
	defer d.Shutdown()
	cfg, stdout := taskConfig(t, `echo "$GREETING from $0"; exit 3`)
	h, err := d.StartTask(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if h.Driver != Name || len(h.DriverState) == 0 {
		t.Fatalf("handle %+v", h)
	}
	res := waitExit(t, d, cfg.ID)
	if res.ExitUnknown || res.ExitCode != 3 {
		t.Fatalf("exit %+v", res)
	}
	if got := stdout(); got != "hello from /bin/sh\n" {
		t.Fatalf("stdout %q", got)
	}
	if err := d.DestroyTask(cfg.ID, false); err != nil {
		t.Fatal(err)
	}
}

func TestRawExecDisabledRefusesToStart(t *testing.T) {
	d := New(nil, nil, false)
	if d.Fingerprint().Detected {
		t.Fatal("a disabled raw_exec must not be detected")
	}
	cfg, _ := taskConfig(t, "true")
	if _, err := d.StartTask(cfg); !errors.Is(err, drivers.ErrDisabled) {
		t.Fatalf("got %v", err)
	}
}

func TestStopTaskEscalatesToSigkillAfterKillTimeout(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	d := New(nil, clk, true)
	defer d.Shutdown()
	// The shell and its sleep ignore SIGINT (ignored signals survive exec).
	ready := filepath.Join(t.TempDir(), "ready")
	cfg, _ := taskConfig(t, `trap "" INT; touch `+ready+`; sleep 1000`)
	if _, err := d.StartTask(cfg); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the task to set its trap", func() bool { _, err := os.Stat(ready); return err == nil })
	stopped := make(chan error, 1)
	go func() { stopped <- d.StopTask(cfg.ID, 5*time.Second, "SIGINT") }()
	if !clk.WaitForTimers(1, 5*time.Second) {
		t.Fatal("StopTask did not wait on the kill timeout")
	}
	st, _ := d.InspectTask(cfg.ID)
	if st.State != drivers.TaskStateRunning {
		t.Fatalf("the task should survive SIGINT, state %s", st.State)
	}
	clk.Advance(5 * time.Second)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	res := waitExit(t, d, cfg.ID)
	if res.Signal != int(syscall.SIGKILL) {
		t.Fatalf("want SIGKILL after the timeout, got %+v", res)
	}
}

func TestStopTaskSignalReachesTheWholeProcessGroup(t *testing.T) {
	d := New(nil, nil, true)
	defer d.Shutdown()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	cfg, _ := taskConfig(t, `sleep 1000 & echo $! > `+pidFile+`; wait`)
	if _, err := d.StartTask(cfg); err != nil {
		t.Fatal(err)
	}
	var child int
	testutil.WaitFor(t, "the task to write its child's pid", func() bool {
		b, _ := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return child != 0
	})
	if err := d.StopTask(cfg.ID, 10*time.Second, "SIGTERM"); err != nil {
		t.Fatal(err)
	}
	waitExit(t, d, cfg.ID)
	if err := d.DestroyTask(cfg.ID, true); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the task's child to die with its group", func() bool {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat")
		return err != nil || strings.Contains(string(st), ") Z ") // gone, or a zombie waiting for init
	})
}

func TestRecoverTaskReattachesToTheSameProcess(t *testing.T) {
	d1 := New(nil, nil, true)
	cfg, _ := taskConfig(t, `sleep 1000`)
	h, err := d1.StartTask(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st1, _ := d1.InspectTask(cfg.ID)
	// The first client goes away; the task keeps running.
	d1.Shutdown()

	d2 := New(nil, nil, true)
	defer d2.Shutdown()
	if err := d2.RecoverTask(h); err != nil {
		t.Fatal(err)
	}
	st2, _ := d2.InspectTask(cfg.ID)
	if st2.Pid != st1.Pid || st2.State != drivers.TaskStateRunning {
		t.Fatalf("recovered %+v, started %+v", st2, st1)
	}
	if err := d2.StopTask(cfg.ID, 5*time.Second, "SIGTERM"); err != nil {
		t.Fatal(err)
	}
	res := waitExit(t, d2, cfg.ID)
	if res == nil {
		t.Fatal("no exit result")
	}
	_ = d2.DestroyTask(cfg.ID, true)

	// A handle whose process is gone cannot be recovered.
	d3 := New(nil, nil, true)
	defer d3.Shutdown()
	if err := d3.RecoverTask(h); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("want ErrTaskNotFound, got %v", err)
	}
}

// A program downloaded into the task dir as a plain file (mode 0644) runs:
// the executor sets its execute bits, as Nomad's does.
func TestRawExecRunsAProgramWithoutExecuteBitsFromTheTaskDir(t *testing.T) {
	d := New(nil, nil, true)
	defer d.Shutdown()
	cfg, stdout := taskConfig(t, "")
	prog := filepath.Join(cfg.TaskDir, "local", "tool")
	if err := os.MkdirAll(filepath.Dir(prog), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho tool ran\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Config = map[string]any{"command": "local/tool"}
	if _, err := d.StartTask(cfg); err != nil {
		t.Fatal(err)
	}
	if res := waitExit(t, d, cfg.ID); res.ExitCode != 0 {
		t.Fatalf("exit %+v", res)
	}
	if got := stdout(); got != "tool ran\n" {
		t.Fatalf("stdout %q", got)
	}
	if fi, err := os.Stat(prog); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode after start: %v %v", fi.Mode(), err)
	}
}
