package rawexec

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/internal/testutil"
)

// A command run in a task's context (a script check) sees the task's
// environment and working directory and returns its exit code.
func TestExecTaskRunsInTheTasksContext(t *testing.T) {
	d := New(nil, nil, true)
	defer d.Shutdown()
	cfg, _ := taskConfig(t, "sleep 60")
	h, err := d.StartTask(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.DestroyTask(h.TaskID, true)
	if err := os.WriteFile(filepath.Join(cfg.Dir, "marker"), []byte("here"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	code, err := d.ExecTask(context.Background(), h.TaskID, "/bin/sh", []string{"-c", `echo "$GREETING $(cat marker)"; exit 3`}, &out)
	if err != nil || code != 3 || out.String() != "hello here\n" {
		t.Fatalf("exit %d, err %v, output %q", code, err, out.String())
	}
	if _, err := d.ExecTask(context.Background(), "no-such-task", "/bin/true", nil, &out); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("unknown task: %v", err)
	}
}

// A command that outlives its context is killed with everything it
// started.
func TestExecTaskTimeoutKillsTheCommandsGroup(t *testing.T) {
	d := New(nil, nil, true)
	defer d.Shutdown()
	cfg, _ := taskConfig(t, "sleep 60")
	h, err := d.StartTask(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.DestroyTask(h.TaskID, true)
	pidFile := filepath.Join(cfg.Dir, "child.pid")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	var out bytes.Buffer
	_, err = d.ExecTask(ctx, h.TaskID, "/bin/sh", []string{"-c", "sleep 60 & echo $! > child.pid; wait"}, &out)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Fatalf("err %v after %v", err, time.Since(start))
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	testutil.WaitFor(t, "the script's child to die with the timeout", func() bool {
		// A killed child may linger as a zombie until init reaps it.
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		return err != nil || strings.Contains(string(st), ") Z ")
	})
}
