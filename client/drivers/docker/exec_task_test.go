package docker

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestExecTaskRunsInTheContainer(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	tt := newTestTask(t, cli, shell("echo ready; sleep 300"))
	start(t, d, tt)
	waitFor(t, "the task to run", 20*time.Second, func() bool { return strings.Contains(tt.stdout.String(), "ready") })
	var out bytes.Buffer
	code, err := d.ExecTask(context.Background(), tt.cfg.ID, "/bin/sh", []string{"-c", `echo "dir=$NOMAD_ALLOC_DIR"; echo err >&2; exit 2`}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if code != 2 || !strings.Contains(out.String(), "dir=/alloc\n") || !strings.Contains(out.String(), "err\n") {
		t.Fatalf("code %d output %q, want 2 with the task's env and both streams", code, out.String())
	}
}

func TestExecTaskCancelKillsTheCommand(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	tt := newTestTask(t, cli, shell("echo ready; sleep 300"))
	start(t, d, tt)
	waitFor(t, "the task to run", 20*time.Second, func() bool { return strings.Contains(tt.stdout.String(), "ready") })
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := d.ExecTask(ctx, tt.cfg.ID, "/bin/sleep", []string{"300"}, &bytes.Buffer{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ExecTask = %v, want the context's error", err)
	}
	if time.Since(began) > 20*time.Second {
		t.Fatal("a cancelled exec kept running")
	}
	var out bytes.Buffer
	if _, err := d.ExecTask(context.Background(), tt.cfg.ID, "/bin/sh", []string{"-c", "ps -o comm | grep -c '^sleep' || true"}, &out); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out.String()) != "1" {
		t.Fatalf("sleep processes after the cancel = %q, want only the task's own", out.String())
	}
}
