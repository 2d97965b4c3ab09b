package allocrunner

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/client/state"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// returnsSoon fails the test if f has not returned within the test
// helpers' deadline: a command sent to a runner whose loop has ended
// must not wait for it.
func returnsSoon(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	testutil.WaitFor(t, what+" to return", func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	})
}

// startOnMock starts a runner for alloc on a mock driver and a fake
// clock, with db as its state DB.
func startOnMock(t *testing.T, alloc *structs.Allocation, db state.DB) (*AllocRunner, *recorder, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	t.Cleanup(drv.Shutdown)
	ar, rec := newRunner(t, alloc, drv, clk, db, t.TempDir(), false)
	go ar.Run()
	return ar, rec, clk
}

// checkDestroyed fails the test unless the alloc's dir and stored state
// are gone.
func checkDestroyed(t *testing.T, ar *AllocRunner, db state.DB) {
	t.Helper()
	if ar.AllocDir().Exists() {
		t.Fatal("the alloc dir still exists")
	}
	if stored, _ := db.GetAllocs(); len(stored) != 0 {
		t.Fatalf("state DB still holds %d allocs", len(stored))
	}
}

// Callers on many goroutines update, confirm, read and signal the runner
// at once while its task runs. The loop takes them one at a time: the
// basis only moves forward, to the newest version, the last report is
// based on it, and a kill afterwards still stops the alloc.
func TestLoopTakesConcurrentCommandsInTurn(t *testing.T) {
	alloc := mockAlloc(structs.JobTypeService, &structs.Task{Name: "web", Config: map[string]any{}})
	ar, rec, clk := startOnMock(t, alloc, state.NewMemDB())
	defer ar.Shutdown()
	testutil.WaitFor(t, "running", func() bool { return rec.last().ClientStatus == structs.AllocClientStatusRunning })

	const writers, versions = 8, 25
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < versions; i++ {
				a := alloc.Copy()
				a.ClientStatus = structs.AllocClientStatusRunning
				a.AllocModifyIndex = uint64(11 + i*writers + w)
				ar.Update(a)
				ar.Confirm()
				if got := ar.Alloc().AllocModifyIndex; got < a.AllocModifyIndex {
					t.Errorf("after Update(%d) the runner is at %d", a.AllocModifyIndex, got)
				}
				_ = ar.TaskState("web")
				_ = ar.TaskStats()
				_ = ar.IsTerminal()
				_ = ar.SignalTasks(context.Background(), "", "SIGHUP")
			}
		}()
	}
	wg.Wait()
	newest := uint64(10 + writers*versions)
	if got := ar.Alloc().AllocModifyIndex; got != newest {
		t.Fatalf("basis %d, want the newest version %d", got, newest)
	}
	testutil.WaitFor(t, "a report based on the newest version", func() bool { return rec.last().AllocModifyIndex == newest })

	ar.Kill("test over")
	testutil.WaitForWhile(t, "stopped", ar.IsTerminal, func() { clk.Advance(time.Second) })
	if got := rec.last().ClientStatus; got != structs.AllocClientStatusComplete {
		t.Fatalf("status %s after the kill", got)
	}
}

// Once Shutdown has returned the loop is gone: later commands return at
// once and change nothing (a newer version is not written to the state DB
// for the next client), and Destroy still removes the alloc's files.
func TestCommandsAfterShutdownChangeNothing(t *testing.T) {
	db := state.NewMemDB()
	alloc := mockAlloc(structs.JobTypeService, &structs.Task{Name: "web", Config: map[string]any{}})
	ar, rec, _ := startOnMock(t, alloc, db)
	testutil.WaitFor(t, "running", func() bool { return rec.last().ClientStatus == structs.AllocClientStatusRunning })
	ar.Shutdown()

	newer := alloc.Copy()
	newer.AllocModifyIndex = 50
	newer.DesiredStatus = structs.AllocDesiredStatusStop
	returnsSoon(t, "Update", func() { ar.Update(newer) })
	returnsSoon(t, "Confirm", ar.Confirm)
	returnsSoon(t, "Kill", func() { ar.Kill("late") })
	returnsSoon(t, "a second Shutdown", ar.Shutdown)
	if got := ar.Alloc().AllocModifyIndex; got != alloc.AllocModifyIndex {
		t.Fatalf("a command after Shutdown moved the alloc to version %d", got)
	}
	stored, err := db.GetAllocs()
	if err != nil || len(stored) != 1 || stored[0].AllocModifyIndex != alloc.AllocModifyIndex {
		t.Fatalf("state DB after a late update: %v, %+v", err, stored)
	}
	if s := ar.TaskState("web"); s == nil || s.State != structs.TaskStateRunning {
		t.Fatalf("a late kill reached the task: %+v", s)
	}

	var destroyErr error
	returnsSoon(t, "Destroy", func() { destroyErr = ar.Destroy() })
	if destroyErr != nil {
		t.Fatalf("destroy after shutdown: %v", destroyErr)
	}
	checkDestroyed(t, ar, db)
}

// Two Destroy calls at once (the GC and a client shutting down) both
// return only once the files are gone, and neither fails.
func TestConcurrentDestroysBothWaitForTheFiles(t *testing.T) {
	db := state.NewMemDB()
	alloc := mockAlloc(structs.JobTypeBatch, &structs.Task{Name: "work", Config: map[string]any{"run_for": "1s"}})
	ar, _, clk := startOnMock(t, alloc, db)
	testutil.WaitForWhile(t, "done", ar.IsTerminal, func() { clk.Advance(500 * time.Millisecond) })

	errs := make(chan error, 2)
	for i := 0; i < 2; i++ {
		go func() {
			err := ar.Destroy()
			if ar.AllocDir().Exists() {
				t.Error("Destroy returned while the alloc dir still existed")
			}
			errs <- err
		}()
	}
	for i := 0; i < 2; i++ {
		if err := <-errs; err != nil {
			t.Fatalf("destroy: %v", err)
		}
	}
	checkDestroyed(t, ar, db)
}

// An alloc moved to a newer deployment is judged again for it: the loop
// drops the first watch's verdict and reports one for the new deployment,
// timed from when the move arrived.
func TestDeploymentHealthJudgedAgainForANewDeployment(t *testing.T) {
	alloc := deploymentAlloc(&structs.Task{Name: "web", Config: map[string]any{}})
	ar, rec, clk := startOnMock(t, alloc, state.NewMemDB())
	defer func() { ar.Kill("done"); <-ar.Done() }()
	testutil.WaitForWhile(t, "health for d1", func() bool { return rec.last().DeploymentStatus != nil }, func() { clk.Advance(time.Second) })
	first := rec.last().DeploymentStatus.Timestamp

	moved := alloc.Copy()
	moved.DeploymentID = "d2"
	moved.ClientStatus = structs.AllocClientStatusRunning
	moved.AllocModifyIndex = 20
	ar.Update(moved)
	movedAt := clk.Now()
	testutil.WaitForWhile(t, "health for d2", func() bool {
		ds := rec.last().DeploymentStatus
		return ds != nil && ds.Timestamp.After(first)
	}, func() { clk.Advance(time.Second) })
	ds := rec.last().DeploymentStatus
	if !*ds.Healthy || ds.Timestamp.Sub(movedAt) < 10*time.Second {
		t.Fatalf("d2 verdict %+v at %v, moved at %v", ds, ds.Timestamp, movedAt)
	}
}
