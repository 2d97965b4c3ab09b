// Package state is Drover's replicated state store: the go-memdb database
// that the raft FSM writes every committed log entry into, and that RPC
// endpoints, the scheduler and the plan applier read.
//
// # Determinism
//
// Every server applies the same log entries in the same order and must end
// up with byte-for-byte the same state. So nothing in this package reads the
// clock or makes random IDs: every raft index and every timestamp arrives as
// an argument. Map iteration never decides what is written.
//
// # Immutability
//
// Objects handed to a write method are copied before they are stored, and
// objects returned by a read method are shared with the store and with every
// snapshot taken since. Callers must treat them as read-only and Copy before
// changing one. This is what makes Snapshot cheap (go-memdb is an immutable
// radix tree, so a snapshot is a pointer) and what lets the scheduler read a
// consistent view while the FSM keeps writing.
//
// # Indexes and blocking queries
//
// The `index` table holds, per table, the raft index of the last write to
// it. Every Txn method updates the rows of the tables it touches in the
// same memdb transaction, so a reader that sees an object also sees an
// index at least as new. BlockingQuery and SnapshotMinIndex wait on memdb
// watch channels, never by polling.
//
// # One write API
//
// Every change goes through Write(index, func(*Txn) error), the only way
// to open a write transaction, and every write is a method of Txn
// (UpsertJob, UpdateNodeStatus, UpsertEvals, UpsertPlanResults, ...). A
// raft entry of one change calls one method; an entry that combines
// changes (a node's status and the evals it creates) calls several in the
// same Write. Either way Write promises:
//
//   - One index. Objects it writes get the Write's raft index as their
//     ModifyIndex, and every table it touches has its `index` row moved
//     to that index in the same transaction (never backwards).
//   - All or nothing. If fn or any change in it returns an error, the
//     transaction is aborted: no row, no table index and no job status
//     changes, no watch channel fires, and neither OnChanges nor
//     AfterCommit runs.
//   - One commit. If fn returns nil, the status of every job whose allocs
//     or evals the changes touched is recomputed once, with every change
//     in, and the transaction commits once: readers, blocking queries and
//     snapshots see all of it or none of it, watches fire and OnChanges
//     gets the changes (the FSM's events), then AfterCommit runs.
//   - Determinism. Nothing in a write reads the clock or makes random
//     IDs: the index comes from Write, and every time from the caller.
//
// fn must not call Write again (go-memdb allows one write transaction at
// a time, so that would deadlock) and must not keep the Txn. A write that
// answers something (how many registrations it wrote, whether a CAS
// applied) returns the answer from its method; the caller keeps it only
// if Write returns nil. Internal helpers that take a *memdb.Txn
// (upsertEvalsTxn, insertAlloc, ...) are the building blocks of the Txn
// methods. The one other writer is a raft snapshot restore, which fills a
// fresh store through Restore (see Ownership).
//
// # Ownership
//
// The store has no goroutines of its own. Writes are serialised by the FSM
// (go-memdb allows one write transaction at a time); reads may run from any
// goroutine. A raft snapshot restore builds a fresh StateStore with
// Restore/Commit; the FSM then swaps it in and calls Abandon on the old one,
// which wakes every blocking query and SnapshotMinIndex waiting on it.
//
// One file per table: schema.go holds the table definitions, and jobs.go,
// nodes.go, allocs.go, evals.go, deployments.go, ... hold the methods for
// each.
package state
