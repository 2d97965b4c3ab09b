package state

import (
	"reflect"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// TestClientReportsShareEqualTaskStates: each report of a client carries
// every task state with its whole history. The store keeps the stored
// version's states and events where the report's are equal, takes the
// report's where they differ, and never changes an earlier version, read
// before or through a snapshot.
func TestClientReportsShareEqualTaskStates(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 1, testJob("web"))
	a := testAlloc("a1", job, "n1")
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a}) }))
	at := time.Unix(1_700_000_000, 0)
	get := func() *structs.Allocation {
		t.Helper()
		got, err := s.AllocByID(nil, "a1")
		mustNoErr(t, err)
		return got
	}

	mustNoErr(t, s.Write(3, func(tx *Txn) error {
		return tx.UpdateAllocsFromClient([]*structs.Allocation{heapBenchReport("a1", structs.AllocClientStatusPending, at)})
	}))
	pending := get()
	pendingWant := pending.Copy()
	snap, err := s.Snapshot()
	mustNoErr(t, err)

	// Running: the same two events and a third, a new state.
	mustNoErr(t, s.Write(4, func(tx *Txn) error {
		return tx.UpdateAllocsFromClient([]*structs.Allocation{heapBenchReport("a1", structs.AllocClientStatusRunning, at)})
	}))
	running := get()
	runningWant := running.Copy()
	old, now := pending.TaskStates["web"], running.TaskStates["web"]
	if now == old || now.State != structs.TaskStateRunning || len(now.Events) != 3 {
		t.Fatalf("running report not stored as a new state: %+v", now)
	}
	for i := range old.Events {
		if now.Events[i] != old.Events[i] {
			t.Fatalf("event %d equal to the pending version's is a copy, not shared", i)
		}
	}

	// A report that repeats the running states: the stored map is kept.
	repeat := heapBenchReport("a1", structs.AllocClientStatusRunning, at)
	repeat.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: new(bool)}
	mustNoErr(t, s.Write(5, func(tx *Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{repeat}) }))
	healthy := get()
	if healthy.ModifyIndex != 5 || healthy.DeploymentStatus == nil {
		t.Fatalf("the health report was not applied: %+v", healthy)
	}
	if reflect.ValueOf(healthy.TaskStates).Pointer() != reflect.ValueOf(running.TaskStates).Pointer() {
		t.Fatal("a report with equal task states stored a new map")
	}

	// An event equal but for its message is the report's own.
	changed := heapBenchReport("a1", structs.AllocClientStatusRunning, at)
	changed.TaskStates["web"].Events[2].DisplayMessage = "Task started again"
	mustNoErr(t, s.Write(6, func(tx *Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{changed}) }))
	last := get().TaskStates["web"]
	if last == now || last.Events[2] == now.Events[2] || last.Events[2].DisplayMessage != "Task started again" {
		t.Fatalf("a changed event was taken for the stored one: %+v", last.Events[2])
	}
	if last.Events[0] != now.Events[0] || last.Events[1] != now.Events[1] {
		t.Fatal("unchanged events beside a changed one were copied")
	}

	if !reflect.DeepEqual(pending, pendingWant) || !reflect.DeepEqual(running, runningWant) {
		t.Fatal("a later report changed an earlier stored version")
	}
	fromSnap, err := snap.AllocByID(nil, "a1")
	mustNoErr(t, err)
	if !reflect.DeepEqual(fromSnap, pendingWant) {
		t.Fatal("a later report changed what a snapshot reads")
	}
}

// TestShareTaskEventsFindsTheRunAfterDroppedEvents: a client that drops
// its oldest events reports a history whose start is in the middle of the
// stored one; the events from there on are shared, the new ones are not.
func TestShareTaskEventsFindsTheRunAfterDroppedEvents(t *testing.T) {
	ev := func(i int64) *structs.TaskEvent {
		return &structs.TaskEvent{Type: structs.TaskRestarting, Time: i, Message: "restarting"}
	}
	old := &structs.TaskState{Events: []*structs.TaskEvent{ev(1), ev(2), ev(3)}}
	report := []*structs.TaskEvent{ev(2), ev(3), ev(4)}
	if n := shareTaskEvents(report, old); n != 2 {
		t.Fatalf("shared %d events, want 2", n)
	}
	if report[0] != old.Events[1] || report[1] != old.Events[2] || report[2].Time != 4 {
		t.Fatalf("wrong events shared: %v", report)
	}
	if n := shareTaskEvents([]*structs.TaskEvent{ev(9)}, old); n != 0 {
		t.Fatalf("shared %d events of a history with none in common", n)
	}
}
