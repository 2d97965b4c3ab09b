package state

import (
	memdb "github.com/hashicorp/go-memdb"
)

// Txn is one write transaction at one raft index. Its methods are the
// store's writes: every change to the store is a Txn method called inside
// Write, whether a raft entry makes one change or several (a node's status
// and the evals it creates, a client's report and the reconnect evals).
// If any change fails, none is kept; if all succeed, readers, blocking
// queries and snapshots see every change at once, from a single commit
// that sets each touched table's index to the entry's index.
//
// The methods take no index: every change is at the Write's, which is what
// "index" means in their documentation. A Txn exists only inside Write and
// must not be kept after fn returns.
type Txn struct {
	txn   *memdb.Txn
	index uint64

	// jobs collects the jobs whose allocs or evals changed, so each job's
	// status is recomputed once, when every change of the entry is in.
	jobs jobSet
}

// Write runs fn in one write transaction at index and commits it only if
// fn returns nil; otherwise the transaction is aborted and the store, its
// table indexes and its watchers see nothing of it, and OnChanges and
// AfterCommit do not run. Before committing it recomputes the status of
// every job whose allocs or evals the changes marked. It is the store's
// only way to write: fn must not call Write again (go-memdb allows one
// write transaction at a time, so that would deadlock), only methods of
// the Txn it is given.
func (s *StateStore) Write(index uint64, fn func(txn *Txn) error) error {
	t := &Txn{txn: s.writeMemTxn(), index: index, jobs: jobSet{}}
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
