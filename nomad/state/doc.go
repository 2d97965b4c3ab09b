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
// it. Every write method updates the rows of the tables it touches in the
// same memdb transaction, so a reader that sees an object also sees an
// index at least as new. BlockingQuery and SnapshotMinIndex wait on memdb
// watch channels, never by polling.
//
// # One raft entry, one transaction
//
// Each raft entry changes the store in exactly one memdb write
// transaction, so an entry that fails part way leaves nothing behind and no
// reader ever sees half of one. A write method (UpsertEvals,
// UpdateNodeStatus, ...) is one transaction of one change. An entry that
// combines changes opens one with Write and makes them with the ...Txn
// methods (UpdateNodeStatusTxn then UpsertEvalsTxn, say); Write recomputes
// the status of the jobs the changes touched and commits once. Internal
// helpers that take a *memdb.Txn (upsertEvalsTxn, insertAlloc, ...) are the
// building blocks of both.
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
