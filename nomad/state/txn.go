package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
)

// Txn is one write transaction at one raft index, assembled from several
// changes: a raft entry that changes more than one thing (a node's status
// and the evals it creates, a client's report and the reconnect evals) is
// applied through one Txn so that it is all or nothing. If any change
// fails, none is kept; if all succeed, readers, blocking queries and
// snapshots see every change at once, from a single commit that sets each
// table's index to the entry's index.
//
// A Txn exists only inside Write. The methods that take one are named
// ...Txn and are the same changes as the write methods without the suffix,
// which are each one Write of one change.
type Txn struct {
	store *StateStore
	txn   *memdb.Txn
	index uint64

	// jobs collects the jobs whose allocs or evals changed, so each job's
	// status is recomputed once, when every change of the entry is in.
	jobs jobSet
}

// Write runs fn in one write transaction at index and commits it only if
// fn returns nil. Before committing it recomputes the status of every job
// whose allocs or evals the transaction changed. fn must not keep txn, and
// must not call write methods of the store (only ...Txn ones): go-memdb
// allows one write transaction at a time, so that would deadlock.
func (s *StateStore) Write(index uint64, fn func(txn *Txn) error) error {
	t := &Txn{store: s, txn: s.writeMemTxn(), index: index, jobs: jobSet{}}
	defer t.txn.Abort()
	if err := fn(t); err != nil {
		return err
	}
	if err := setJobStatuses(t.txn, index, t.jobs, false); err != nil {
		return err
	}
	s.commit(t.txn)
	return nil
}

// mem returns the memdb transaction of t, which must belong to s: a change
// made through one store's method with another store's transaction would
// land in the wrong database.
func (s *StateStore) mem(t *Txn) *memdb.Txn {
	if t.store != s {
		panic(fmt.Sprintf("state: a transaction of one store used with another (index %d)", t.index))
	}
	return t.txn
}
