package state

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// UpsertEvals creates or updates evaluations. CreateIndex is kept on update
// and ModifyIndex set to index. An eval reporting QueuedAllocations sets the
// Queued counts of its job's summary, and the job's status is recomputed
// (a job whose only activity is a pending eval is pending).
//
// Cancelling older blocked evals of the same job is BlockedEvals' job, not
// the store's: the store records what it is told.
//
// The jobs are recomputed once, when Write commits, so an entry that
// writes evals together with the change that caused them recomputes each
// job's status with every change in.
func (tx *Txn) UpsertEvals(evals []*structs.Evaluation) error {
	return upsertEvalsTxn(tx.txn, tx.index, evals, tx.jobs)
}

// upsertEvalsTxn does the work of UpsertEvals inside a larger write and
// records the jobs whose status must be recomputed in js.
func upsertEvalsTxn(txn *memdb.Txn, index uint64, evals []*structs.Evaluation, js jobSet) error {
	if len(evals) == 0 {
		return nil
	}
	for _, eval := range evals {
		if eval == nil {
			continue
		}
		if eval.ID == "" {
			return fmt.Errorf("state: eval for job %s has no ID", eval.JobID)
		}
		e := eval.Copy()
		if e.Namespace == "" {
			e.Namespace = structs.DefaultNamespace
		}
		existing, err := evalByIDTxn(txn, nil, e.ID)
		if err != nil {
			return err
		}
		if existing != nil {
			e.CreateIndex = existing.CreateIndex
		} else {
			e.CreateIndex = index
		}
		e.ModifyIndex = index
		if err := updateSummaryWithEval(txn, index, e); err != nil {
			return err
		}
		if err := txn.Insert(TableEvals, e); err != nil {
			return fmt.Errorf("state: inserting eval %s: %w", e.ID, err)
		}
		js.add(e.Namespace, e.JobID)
	}
	return setIndex(txn, TableEvals, index)
}

// DeleteEvals removes evaluations and allocations (the core scheduler's
// garbage collection). IDs that are already gone are skipped: GC batches
// may overlap. The status of the jobs they belonged to is recomputed with
// the knowledge that their history was collected, so a finished job stays
// dead instead of going back to pending.
//
// Garbage collection chose the allocs on a read that raft may have
// overtaken (a batch job registered again, say), so each alloc is checked
// again against AllocIsGCable with its job as it is now. One that no
// longer passes is kept, and so is its eval, so that the eval is collected
// with it later rather than leaving it orphaned.
//
// Every node that loses an alloc gets its deleted-allocs index moved to
// index (see NodeAllocsDeletedIndex), so its client's assignment never
// goes back in time and a client blocked on it wakes up.
func (tx *Txn) DeleteEvals(evalIDs, allocIDs []string) error {
	return tx.deleteEvals(evalIDs, allocIDs, false)
}

// DeleteEvalsOnceEmpty is DeleteEvals that also keeps every eval with an
// alloc left after the deletion, whether this call kept the alloc or never
// named it: a collection too large for one raft entry deletes an eval's
// allocs over several entries and the eval with the last of them, and an
// alloc an earlier entry kept must keep its eval.
func (tx *Txn) DeleteEvalsOnceEmpty(evalIDs, allocIDs []string) error {
	return tx.deleteEvals(evalIDs, allocIDs, true)
}

func (tx *Txn) deleteEvals(evalIDs, allocIDs []string, keepNonEmpty bool) error {
	txn, index := tx.txn, tx.index
	js := jobSet{}
	keptEvals := map[string]bool{}
	nodes := map[string]struct{}{}
	for _, id := range allocIDs {
		a, err := allocByIDTxn(txn, nil, id)
		if err != nil {
			return err
		}
		if a == nil {
			continue
		}
		job, err := jobByIDTxn(txn, nil, a.Namespace, a.JobID)
		if err != nil {
			return err
		}
		if !AllocIsGCable(a, job) {
			keptEvals[a.EvalID] = true
			continue
		}
		if err := txn.Delete(TableAllocs, a); err != nil {
			return fmt.Errorf("state: deleting alloc %s: %w", id, err)
		}
		if err := deleteServiceRegistrationsTxn(txn, index, "alloc_id", a.ID); err != nil {
			return err
		}
		js.add(a.Namespace, a.JobID)
		if a.NodeID != "" {
			nodes[a.NodeID] = struct{}{}
		}
	}
	evalsWithAllocs := jobEvalsWithAllocs{}
	for _, id := range evalIDs {
		if keptEvals[id] {
			continue
		}
		e, err := evalByIDTxn(txn, nil, id)
		if err != nil {
			return err
		}
		if e == nil {
			continue
		}
		if keepNonEmpty {
			left, err := evalsWithAllocs.of(txn, e)
			if err != nil {
				return err
			}
			if left[id] {
				continue
			}
		}
		if err := txn.Delete(TableEvals, e); err != nil {
			return fmt.Errorf("state: deleting eval %s: %w", id, err)
		}
		js.add(e.Namespace, e.JobID)
	}
	if err := setIndexes(txn, index, TableEvals, TableAllocs); err != nil {
		return err
	}
	if err := setNodeAllocsDeletedIndexes(txn, index, nodes); err != nil {
		return err
	}
	return setJobStatuses(txn, index, js, true)
}

// EvalByID returns the eval, or nil.
func (s *StateStore) EvalByID(ws memdb.WatchSet, id string) (*structs.Evaluation, error) {
	return evalByIDTxn(s.readTxn(), ws, id)
}

func evalByIDTxn(txn *memdb.Txn, ws memdb.WatchSet, id string) (*structs.Evaluation, error) {
	obj, err := firstByKey(txn, ws, func(e *structs.Evaluation) bool { return e.ID == id }, TableEvals, "id", id)
	if err != nil {
		return nil, fmt.Errorf("state: eval lookup: %w", err)
	}
	return obj, nil
}

// EvalsByIDPrefix iterates over the evals whose ID starts with prefix, in
// namespace (or every namespace if namespace is "" or "*").
func (s *StateStore) EvalsByIDPrefix(ws memdb.WatchSet, namespace, prefix string) (memdb.ResultIterator, error) {
	iter, err := getWatch(s.readTxn(), ws, TableEvals, "id_prefix", prefix)
	if err != nil {
		return nil, err
	}
	return filterNamespace(iter, namespace, func(raw any) string { return raw.(*structs.Evaluation).Namespace }), nil
}

// EvalsByJob returns every eval of a job.
func (s *StateStore) EvalsByJob(ws memdb.WatchSet, namespace, jobID string) ([]*structs.Evaluation, error) {
	// The trailing "" is an empty status prefix: all statuses of exactly
	// this job, and not of jobs whose ID merely starts with jobID.
	iter, err := getWatch(s.readTxn(), ws, TableEvals, "job_prefix", namespace, jobID, "")
	if err != nil {
		return nil, err
	}
	return appendAll[*structs.Evaluation](nil, iter), nil
}

// EvalsByJobAndStatus returns the evals of a job in one status.
func (s *StateStore) EvalsByJobAndStatus(ws memdb.WatchSet, namespace, jobID, status string) ([]*structs.Evaluation, error) {
	iter, err := getWatch(s.readTxn(), ws, TableEvals, "job", namespace, jobID, status)
	if err != nil {
		return nil, err
	}
	return appendAll[*structs.Evaluation](nil, iter), nil
}

// Evals iterates over every eval.
func (s *StateStore) Evals(ws memdb.WatchSet) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableEvals, "id")
}

// filterNamespace keeps only the objects of namespace; "" and "*" keep all.
func filterNamespace(iter memdb.ResultIterator, namespace string, nsOf func(any) string) memdb.ResultIterator {
	if namespace == "" || namespace == "*" {
		return iter
	}
	return memdb.NewFilterIterator(iter, func(raw any) bool { return nsOf(raw) != namespace })
}

// jobEvalsWithAllocs remembers, per job, which of its evals still have
// allocs, so that an entry deleting many evals of one job reads the job's
// allocs once (there is no index on an alloc's eval: see AllocsByEval).
type jobEvalsWithAllocs map[structs.NamespacedID]map[string]bool

// of returns the IDs of e's job's evals that have an alloc in txn.
func (m jobEvalsWithAllocs) of(txn *memdb.Txn, e *structs.Evaluation) (map[string]bool, error) {
	key := structs.NamespacedID{ID: e.JobID, Namespace: e.Namespace}
	if evals, ok := m[key]; ok {
		return evals, nil
	}
	iter, err := txn.Get(TableAllocs, "job", e.Namespace, e.JobID)
	if err != nil {
		return nil, fmt.Errorf("state: allocs of job %s: %w", e.JobID, err)
	}
	evals := map[string]bool{}
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		evals[raw.(*structs.Allocation).EvalID] = true
	}
	m[key] = evals
	return evals, nil
}
