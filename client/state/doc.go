// Package state persists what a client needs to pick up where it left off
// after a restart: each allocation as last received from the servers, and
// for each task its state (events, restarts) and its driver handle (driver
// name, pid, process start time).
//
// The real store is a bolt database (go.etcd.io/bbolt) at
// <data_dir>/client/state.db; MemDB keeps the same data in memory for tests
// and dev agents. Values are JSON, so the file can be inspected with any
// bolt browser and survives field additions.
//
// Layout:
//
//	allocs/<alloc_id>/alloc              the Allocation
//	allocs/<alloc_id>/tasks/<task>/state  the TaskState
//	allocs/<alloc_id>/tasks/<task>/handle the drivers.TaskHandle
//
// Concurrency: every method may be called from any goroutine (alloc and
// task runners write their own keys); bolt serialises write transactions.
package state
