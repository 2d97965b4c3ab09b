package agent

import (
	"errors"
	"io"
	"strings"
	"testing"

	nomadapi "github.com/hashicorp/nomad/api"
)

// nomadCat reads a file of the alloc dir with Nomad's AllocFS().Cat; ""
// when it cannot (yet).
func nomadCat(t *testing.T, c *nomadapi.Client, alloc *nomadapi.Allocation, path string) string {
	t.Helper()
	r, err := c.AllocFS().Cat(alloc, path, nil)
	if err != nil {
		return ""
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("cat %s: %v", path, err)
	}
	return string(b)
}

func nomadStatusCode(err error) int {
	var ue nomadapi.UnexpectedResponseError
	if errors.As(err, &ue) {
		return ue.StatusCode()
	}
	return 0
}

// TestNomadClientActsOnARunningAlloc drives the client-served endpoints
// with Nomad's own Go client: signal and restart a task, read the alloc
// dir, read the node's stats, collect the finished alloc.
func TestNomadClientActsOnARunningAlloc(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, nil)
	c := nomadClient(t, a)
	job := nomadapi.NewServiceJob("acts", "acts", "global", 50).AddDatacenter("dc1")
	task := nomadapi.NewTask("app", "raw_exec").SetConfig("command", "/bin/sh").SetConfig("args", []string{"-c", signalScript})
	task.Require(&nomadapi.Resources{CPU: ptr(100), MemoryMB: ptr(64)})
	job.AddTaskGroup(nomadapi.NewTaskGroup("web", 1).AddTask(task))
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	alloc := nomadJobAllocs(t, c, "acts", 1, "the alloc to run", clientStatus("running"))[0]
	waitUntil(t, "the task's pid", func() bool { return strings.Count(nomadCat(t, c, alloc, "alloc/pids"), "\n") == 1 })
	firstPid := strings.TrimSpace(nomadCat(t, c, alloc, "alloc/pids"))

	// Signal: the task's trap records it, and it keeps running.
	if err := c.Allocations().Signal(alloc, nil, "app", "SIGUSR1"); err != nil {
		t.Fatalf("signal: %v", err)
	}
	waitUntil(t, "the task to record SIGUSR1", func() bool { return nomadCat(t, c, alloc, "alloc/signals") == "usr1\n" })
	err := c.Allocations().Signal(alloc, nil, "app", "SIGBOGUS")
	if nomadStatusCode(err) != 400 || !strings.Contains(err.Error(), "Signal") || !strings.Contains(err.Error(), "SIGUSR1") {
		t.Fatalf("unknown signal: %v", err)
	}

	// Restart: a new process, the alloc still running, the restart in the
	// task's events.
	if err := c.Allocations().Restart(alloc, "app", nil); err != nil {
		t.Fatalf("restart: %v", err)
	}
	waitUntil(t, "a new process", func() bool { return len(strings.Fields(nomadCat(t, c, alloc, "alloc/pids"))) == 2 })
	if pids := strings.Fields(nomadCat(t, c, alloc, "alloc/pids")); pids[1] == firstPid {
		t.Fatalf("the restarted task kept pid %s", firstPid)
	}
	waitUntil(t, "the restart in the task's state", func() bool {
		info, _, err := c.Allocations().Info(alloc.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		ts := info.TaskStates["app"]
		if info.ClientStatus != "running" || ts == nil || ts.State != "running" || ts.Restarts != 1 {
			return false
		}
		for _, e := range ts.Events {
			if e.Type == nomadapi.TaskRestartSignal && e.RestartReason == "User requested restart" {
				return true
			}
		}
		return false
	})
	if err := c.Allocations().RestartAllTasks(alloc, nil); err != nil {
		t.Fatalf("restart all tasks: %v", err)
	}
	waitUntil(t, "a third process", func() bool { return len(strings.Fields(nomadCat(t, c, alloc, "alloc/pids"))) == 3 })

	// The alloc dir.
	files, _, err := c.AllocFS().List(alloc, "/", nil)
	if err != nil || len(files) != 2 || files[0].Name != "alloc" || !files[0].IsDir || files[1].Name != "app" {
		t.Fatalf("list /: %v %+v", err, files)
	}
	fi, _, err := c.AllocFS().Stat(alloc, "app/local/hello.txt", nil)
	if err != nil || fi.Size != 6 || fi.IsDir || fi.FileMode != "-rw-r--r--" || !strings.HasPrefix(fi.ContentType, "text/plain") {
		t.Fatalf("stat: %v %+v", err, fi)
	}
	r, err := c.AllocFS().ReadAt(alloc, "app/local/hello.txt", 1, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	if string(b) != "ell" {
		t.Fatalf("readat %q", b)
	}
	if _, _, err := c.AllocFS().List(alloc, "../", nil); nomadStatusCode(err) != 400 || !strings.Contains(err.Error(), "escapes") {
		t.Fatalf("list ../: %v", err)
	}
	if _, err := c.AllocFS().Cat(alloc, "app/local/etc-link/passwd", nil); err == nil || !strings.Contains(err.Error(), "escapes") {
		t.Fatalf("cat through a symlink out: %v", err)
	}

	// The node's stats.
	st, err := c.Nodes().Stats(a.NodeID(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Memory == nil || st.Memory.Total == 0 || st.Memory.Used == 0 || len(st.CPU) == 0 || len(st.DiskStats) == 0 ||
		st.AllocDirStats == nil || st.AllocDirStats.Size == 0 || st.Uptime == 0 || st.DeviceStats == nil {
		t.Fatalf("node stats %+v", st)
	}

	// Collection: refused while running, done once stopped.
	if err := c.Nodes().GcAlloc(alloc.ID, nil); nomadStatusCode(err) != 409 {
		t.Fatalf("gc of a running alloc: %v", err)
	}
	if _, _, err := c.Jobs().Deregister("acts", false, nil); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the stopped alloc to be collected", func() bool {
		err := c.Nodes().GcAlloc(alloc.ID, nil)
		if nomadStatusCode(err) == 409 {
			return false
		}
		if err != nil {
			t.Fatalf("gc: %v", err)
		}
		return true
	})
	if _, _, err := c.AllocFS().List(alloc, "/", nil); nomadStatusCode(err) != 404 {
		t.Fatalf("list after gc: %v", err)
	}
}
