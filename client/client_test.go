package client

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/structs"
)

func TestClientRegistersAndHeartbeats(t *testing.T) {
	e := newEnv(t, 10*time.Second)
	c := e.start(nil)
	n := e.fs.Node(c.NodeID())
	if n.Attributes.Value("driver.raw_exec") != "1" || n.Attributes.Value("unique.network.ip-address") != "127.0.0.1" || n.Drivers["mock_driver"] == nil {
		t.Fatalf("registered node %+v", n.Attributes)
	}
	e.waitFor("two heartbeats", func() bool { return e.fs.Calls("Node.UpdateStatus") >= 2 })
	// A server that lost the node gets it registered again.
	regs := e.fs.Calls("Node.Register")
	e.fs.ForgetNodes()
	e.waitFor("re-registration", func() bool { return e.fs.Calls("Node.Register") > regs && e.fs.Node(c.NodeID()) != nil })
}

func TestAssignmentStartsUpdatesAndStopsAllocs(t *testing.T) {
	e := newEnv(t, 10*time.Second)
	c := e.start(nil)
	keep := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeService, mockTask(map[string]any{}))))
	stop := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeService, mockTask(map[string]any{}))))
	gone := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeService, mockTask(map[string]any{}))))
	for _, a := range []*structs.Allocation{keep, stop, gone} {
		e.waitServerStatus(a.ID, structs.AllocClientStatusRunning)
	}

	// Desired stop: the task is stopped and the alloc reported complete.
	e.fs.StopAlloc(stop.ID)
	e.waitServerStatus(stop.ID, structs.AllocClientStatusComplete)
	ts := e.fs.Alloc(stop.ID).TaskStates["web"]
	if ts.State != structs.TaskStateDead || ts.Failed || countEvents(ts, structs.TaskKilled) != 1 {
		t.Fatalf("stopped task %+v (%s)", ts, eventList(ts))
	}

	// Missing from the assignment: stopped too, and its dir removed as
	// soon as it has stopped (the servers no longer know it).
	e.fs.RemoveAlloc(gone.ID)
	e.waitFor("removed alloc to stop and be destroyed", func() bool { return c.runner(gone.ID) == nil })
	if _, err := os.Stat(filepath.Join(e.dir, "alloc", gone.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the removed alloc's directory is still there: %v", err)
	}
	if got := e.serverStatus(keep.ID); got != structs.AllocClientStatusRunning {
		t.Fatalf("untouched alloc is %s", got)
	}
}

func TestStaleAssignmentDoesNotRemoveNewerAlloc(t *testing.T) {
	e := newEnv(t, 10*time.Second)
	c := e.start(nil)
	a := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeService, mockTask(map[string]any{}))))
	e.waitServerStatus(a.ID, structs.AllocClientStatusRunning)

	// A lagging follower answers with an index from before the alloc
	// existed and an assignment without it.
	calls := e.fs.Calls("Node.GetClientAllocs")
	e.fs.QueueClientAllocs(&structs.NodeClientAllocsResponse{Allocs: map[string]uint64{}, QueryMeta: structs.QueryMeta{Index: a.CreateIndex - 1}})
	e.waitFor("the stale answer to be read and the query repeated", func() bool { return e.fs.Calls("Node.GetClientAllocs") >= calls+2 })
	// The watcher still follows the (fresh) assignment afterwards.
	b := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeService, mockTask(map[string]any{}))))
	e.waitServerStatus(b.ID, structs.AllocClientStatusRunning)
	ar := c.runner(a.ID)
	if ar == nil || ar.IsTerminal() || ar.TaskState("web").State != structs.TaskStateRunning {
		t.Fatal("a stale answer removed a newer alloc")
	}
	if got := e.serverStatus(a.ID); got != structs.AllocClientStatusRunning {
		t.Fatalf("server sees %s", got)
	}
}

func TestRefusedUpdatesAreKeptAndResentAfterHeartbeat(t *testing.T) {
	// A long TTL: no heartbeat happens while the test steps the clock.
	e := newEnv(t, time.Hour)
	c := e.start(nil)
	e.fs.SetNotReady(true)
	a := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeService, mockTask(map[string]any{}))))
	e.waitFor("an update to be refused", func() bool { return e.fs.Calls("Node.UpdateAlloc") >= 1 })
	e.waitFor("the task to run locally", func() bool {
		ar := c.runner(a.ID)
		return ar != nil && ar.TaskState("web") != nil && ar.TaskState("web").State == structs.TaskStateRunning
	})
	if len(e.fs.Updates()) != 0 || c.updates.Pending() == 0 {
		t.Fatalf("refused updates must be held: accepted %d, pending %d", len(e.fs.Updates()), c.updates.Pending())
	}
	refused := e.fs.Calls("Node.UpdateAlloc")
	e.clk.Advance(10 * time.Second)
	if e.fs.Calls("Node.UpdateAlloc") != refused {
		t.Fatal("held updates were resent before a heartbeat")
	}
	// The heartbeat (due at about half the TTL) makes the node ready.
	e.waitFor("the heartbeat", func() bool {
		if e.fs.Calls("Node.UpdateStatus") == 0 {
			e.clk.Advance(time.Minute)
		}
		return e.fs.Calls("Node.UpdateStatus") >= 1
	})
	e.waitServerStatus(a.ID, structs.AllocClientStatusRunning)
	ups := e.fs.Updates()
	if ups[0].ClientStatus != structs.AllocClientStatusRunning {
		t.Fatalf("the resent batch should carry the newest state (running), got %s", ups[0].ClientStatus)
	}
}

func TestAnUpdateRefusedOnItsMeritsDoesNotHoldOthers(t *testing.T) {
	e := newEnv(t, 10*time.Second)
	c := e.start(nil)
	bad := allocFor(c.NodeID(), job(structs.JobTypeService, mockTask(map[string]any{})))
	e.fs.RejectUpdatesFor(bad.ID)
	e.fs.UpsertAlloc(bad)
	good := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeService, mockTask(map[string]any{}))))
	e.waitServerStatus(good.ID, structs.AllocClientStatusRunning)
	e.waitFor("the refused update to be dropped", func() bool { return c.updates.Pending() == 0 })
	if got := e.serverStatus(bad.ID); got != structs.AllocClientStatusPending {
		t.Fatalf("the rejected alloc is %s on the server", got)
	}
}

func TestAllocLogsAfterCompletion(t *testing.T) {
	e := newEnv(t, 10*time.Second)
	c := e.start(nil)
	a := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeBatch, mockTask(map[string]any{"run_for": "1s", "stdout_string": "hello\n"}))))
	e.waitServerStatus(a.ID, structs.AllocClientStatusComplete)
	r, err := c.AllocLogs(a.ID, "web", "stdout", "start", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	if string(b) != "hello\n" {
		t.Fatalf("logs %q", b)
	}
	if _, err := c.AllocLogs("nope", "web", "stdout", "start", 0, false); err == nil {
		t.Fatal("want an error for an unknown alloc")
	}
	if _, err := c.AllocLogs(a.ID, "web", "stdin", "start", 0, false); err == nil || !strings.Contains(err.Error(), "stdout or stderr") {
		t.Fatalf("want an error naming the log types, got %v", err)
	}
}

func TestStopOnClientAfterFencesAllocsWhenServersAreUnreachable(t *testing.T) {
	e := newEnv(t, 10*time.Second)
	c := e.start(nil)
	window := 30 * time.Second
	j := job(structs.JobTypeService, mockTask(map[string]any{}))
	j.TaskGroups[0].Disconnect = &structs.DisconnectStrategy{StopOnClientAfter: &window}
	plain := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeService, mockTask(map[string]any{}))))
	a := e.fs.UpsertAlloc(allocFor(c.NodeID(), j))
	e.waitServerStatus(a.ID, structs.AllocClientStatusRunning)
	e.waitServerStatus(plain.ID, structs.AllocClientStatusRunning)

	e.fs.SetDown(true)
	lost := c.LastHeartbeat()
	dead := func() bool { return c.runner(a.ID).TaskState("web").State == structs.TaskStateDead }
	e.waitFor("the fence", func() bool {
		if dead() {
			return true
		}
		e.clk.Advance(time.Second)
		return false
	})
	if since := e.clk.Now().Sub(lost); since < window {
		t.Fatalf("stopped after %v without contact, before stop_on_client_after %v", since, window)
	}
	if c.runner(plain.ID).TaskState("web").State != structs.TaskStateRunning {
		t.Fatal("an alloc without stop_on_client_after must keep running")
	}
	e.fs.SetDown(false)
	e.waitServerStatus(a.ID, structs.AllocClientStatusComplete)
}

func TestShutdownWithStopTasksOnShutdownKillsTasks(t *testing.T) {
	e := newEnv(t, 10*time.Second)
	c := e.start(func(cfg *config.Config) { cfg.StopTasksOnShutdown = true })
	a := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeService, mockTask(map[string]any{}))))
	e.waitServerStatus(a.ID, structs.AllocClientStatusRunning)
	done := make(chan struct{})
	go func() { c.Shutdown(); close(done) }()
	e.waitFor("shutdown", func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	})
	if s := c.runner(a.ID).TaskState("web"); s.State != structs.TaskStateDead {
		t.Fatalf("task state %s", s.State)
	}
}
