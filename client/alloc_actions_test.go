package client

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/client/taskrunner"
	"github.com/drover-sched/drover/structs"
)

func TestRestartAllocRestartsRunningTasksInPlace(t *testing.T) {
	e := newEnv(t, time.Hour)
	c := e.start(nil)
	other := mockTask(map[string]any{"run_for": "1h"})
	other.Name = "side"
	a := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeService, mockTask(map[string]any{"run_for": "1h"}), other)))
	e.waitServerStatus(a.ID, structs.AllocClientStatusRunning)
	// The alloc is running once one task is; a restart of all tasks
	// restarts those running, so wait for both.
	e.waitFor("both tasks to run", func() bool {
		ar := c.runner(a.ID)
		return ar.TaskState("web").State == structs.TaskStateRunning && ar.TaskState("side").State == structs.TaskStateRunning
	})
	ctx := context.Background()

	if err := c.RestartAlloc(ctx, a.ID, "web"); err != nil {
		t.Fatal(err)
	}
	e.waitFor("web to run again", func() bool {
		s := c.runner(a.ID).TaskState("web")
		return s.Restarts == 1 && s.State == structs.TaskStateRunning
	})
	if s := c.runner(a.ID).TaskState("side"); s.Restarts != 0 {
		t.Fatalf("restarting web restarted side: %s", eventList(s))
	}
	if err := c.RestartAlloc(ctx, a.ID, ""); err != nil {
		t.Fatal(err)
	}
	e.waitFor("both to run again", func() bool {
		ar := c.runner(a.ID)
		return ar.TaskState("web").Restarts == 2 && ar.TaskState("side").Restarts == 1 &&
			ar.TaskState("web").State == structs.TaskStateRunning && ar.TaskState("side").State == structs.TaskStateRunning
	})
	// The servers hear of it through the usual status updates, and the
	// alloc never stopped running.
	e.waitFor("the restart events to reach the servers", func() bool {
		ts := e.fs.Alloc(a.ID).TaskStates["web"]
		return ts != nil && countEvents(ts, taskrunner.TaskRestartSignal) == 2
	})
	if got := e.serverStatus(a.ID); got != structs.AllocClientStatusRunning {
		t.Fatalf("alloc is %s", got)
	}

	if err := c.RestartAlloc(ctx, a.ID, "nope"); !errors.Is(err, ErrUnknownTask) {
		t.Fatalf("unknown task: %v", err)
	}
	if err := c.RestartAlloc(ctx, "no-such-alloc", ""); !errors.Is(err, ErrUnknownAlloc) {
		t.Fatalf("unknown alloc: %v", err)
	}
	if err := c.SignalAlloc(ctx, a.ID, "web", "SIGFOO"); !errors.Is(err, ErrUnknownSignal) || !strings.Contains(err.Error(), "SIGUSR1") {
		t.Fatalf("unknown signal: %v", err)
	}
}

func TestGCAllocRemovesOnlyATerminalAlloc(t *testing.T) {
	e := newEnv(t, time.Hour)
	c := e.start(nil)
	running := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeService, mockTask(map[string]any{"run_for": "1h"}))))
	done := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeBatch, mockTask(map[string]any{"run_for": "1s"}))))
	e.waitServerStatus(running.ID, structs.AllocClientStatusRunning)
	e.waitServerStatus(done.ID, structs.AllocClientStatusComplete)
	e.waitFor("the finished alloc's runner to end", func() bool { return c.runner(done.ID).IsTerminal() })

	err := c.GCAlloc(running.ID)
	if !errors.Is(err, ErrAllocNotTerminal) || !strings.Contains(err.Error(), "running") || !strings.Contains(err.Error(), "stop it first") {
		t.Fatalf("collecting a running alloc: %v", err)
	}
	if c.runner(running.ID) == nil || !c.runner(running.ID).AllocDir().Exists() {
		t.Fatal("a refused collection removed the alloc")
	}

	dir := c.runner(done.ID).AllocDir()
	if err := c.GCAlloc(done.ID); err != nil {
		t.Fatal(err)
	}
	if dir.Exists() || c.runner(done.ID) != nil {
		t.Fatal("the collected alloc is still there")
	}
	for _, id := range c.gc.Eligible() {
		if id == done.ID {
			t.Fatal("the collector still holds the collected alloc")
		}
	}
	if err := c.GCAlloc(done.ID); !errors.Is(err, ErrUnknownAlloc) {
		t.Fatalf("collecting twice: %v", err)
	}
}

func TestAllocFilesAreReadUnderTheAllocDirOnly(t *testing.T) {
	e := newEnv(t, time.Hour)
	c := e.start(nil)
	a := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeService, mockTask(map[string]any{"run_for": "1h"}))))
	e.waitServerStatus(a.ID, structs.AllocClientStatusRunning)
	local := c.runner(a.ID).AllocDir().Task("web").LocalDir
	if err := os.WriteFile(filepath.Join(local, "out.txt"), []byte("written by the task"), 0o644); err != nil {
		t.Fatal(err)
	}

	list, err := c.AllocFileList(a.ID, "/web/local")
	if err != nil || len(list) != 1 || list[0].Name != "out.txt" {
		t.Fatalf("list: %+v %v", list, err)
	}
	fi, err := c.AllocFileStat(a.ID, "web/local/out.txt")
	if err != nil || fi.Size != int64(len("written by the task")) {
		t.Fatalf("stat: %+v %v", fi, err)
	}
	f, err := c.AllocFileOpen(a.ID, "web/local/out.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "written by the task" {
		t.Fatalf("read %q", b)
	}
	if _, err := c.AllocFileStat(a.ID, "../"); !errors.Is(err, allocdir.ErrPathEscapes) {
		t.Fatalf("escape: %v", err)
	}
	if _, err := c.AllocFileList("no-such-alloc", "/"); !errors.Is(err, ErrUnknownAlloc) {
		t.Fatalf("unknown alloc: %v", err)
	}
}

func TestHostStatsDescribeTheHost(t *testing.T) {
	e := newEnv(t, time.Hour)
	c := e.start(nil)
	s, err := c.HostStats()
	if err != nil {
		t.Fatal(err)
	}
	if s.Memory.Total == 0 || len(s.CPU) == 0 || s.AllocDir.Size == 0 || !s.Timestamp.Equal(e.clk.Now()) {
		t.Fatalf("host stats %+v", s)
	}
}
