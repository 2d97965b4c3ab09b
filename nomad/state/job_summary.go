package state

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// JobSummaryByID returns a job's allocation counts, or nil.
func (s *StateStore) JobSummaryByID(ws memdb.WatchSet, namespace, jobID string) (*structs.JobSummary, error) {
	return jobSummaryTxn(s.readTxn(), ws, namespace, jobID)
}

// JobSummaries iterates over every job summary (for snapshot persistence).
func (s *StateStore) JobSummaries(ws memdb.WatchSet) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableJobSummary, "id")
}

func jobSummaryTxn(txn *memdb.Txn, ws memdb.WatchSet, namespace, jobID string) (*structs.JobSummary, error) {
	obj, err := firstByKey(txn, ws, func(s *structs.JobSummary) bool { return s.Namespace == namespace && s.JobID == jobID }, TableJobSummary, "id", namespace, jobID)
	if err != nil {
		return nil, fmt.Errorf("state: job summary lookup: %w", err)
	}
	return obj, nil
}

// ensureJobSummary creates the summary of a new job, or reshapes an
// existing one to the job's groups: new groups start at zero, groups no
// longer in the job are dropped. A summary left from an earlier incarnation
// of the job (different CreateIndex) is started over.
func ensureJobSummary(txn *memdb.Txn, index uint64, job *structs.Job) error {
	existing, err := jobSummaryTxn(txn, nil, job.Namespace, job.ID)
	if err != nil {
		return err
	}
	var sum *structs.JobSummary
	changed := false
	if existing == nil || existing.CreateIndex != job.CreateIndex {
		sum = &structs.JobSummary{
			JobID:       job.ID,
			Namespace:   job.Namespace,
			Summary:     make(map[string]structs.TaskGroupSummary, len(job.TaskGroups)),
			Children:    &structs.JobChildrenSummary{},
			CreateIndex: job.CreateIndex,
		}
		changed = true
	} else {
		sum = existing.Copy()
		if sum.Children == nil {
			sum.Children = &structs.JobChildrenSummary{}
			changed = true
		}
	}
	want := make(map[string]bool, len(job.TaskGroups))
	for _, tg := range job.TaskGroups {
		want[tg.Name] = true
		if _, ok := sum.Summary[tg.Name]; !ok {
			sum.Summary[tg.Name] = structs.TaskGroupSummary{}
			changed = true
		}
	}
	for name := range sum.Summary {
		if !want[name] {
			delete(sum.Summary, name)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	sum.ModifyIndex = index
	if err := txn.Insert(TableJobSummary, sum); err != nil {
		return fmt.Errorf("state: inserting summary of job %s: %w", job.ID, err)
	}
	return nil
}

// updateSummaryWithAlloc counts alloc (whose previous version is existing,
// nil for a new alloc) in its job's summary. A new placement also takes
// one from Queued: the eval that queued it is satisfied by it. Allocs of an
// earlier incarnation of the job, and of groups the job no longer has, are
// not counted.
func updateSummaryWithAlloc(txn *memdb.Txn, index uint64, alloc, existing *structs.Allocation) error {
	if existing != nil && existing.ClientStatus == alloc.ClientStatus {
		return nil
	}
	summary, err := jobSummaryTxn(txn, nil, alloc.Namespace, alloc.JobID)
	if err != nil || summary == nil {
		return err
	}
	if alloc.Job != nil && alloc.Job.CreateIndex != summary.CreateIndex {
		return nil
	}
	tg, ok := summary.Summary[alloc.TaskGroup]
	if !ok {
		return nil
	}
	if existing == nil {
		if alloc.DesiredStatus != structs.AllocDesiredStatusStop && alloc.DesiredStatus != structs.AllocDesiredStatusEvict && tg.Queued > 0 {
			tg.Queued--
		}
	} else {
		countClientStatus(&tg, existing.ClientStatus, -1)
	}
	countClientStatus(&tg, alloc.ClientStatus, +1)
	sum := summary.Copy()
	sum.Summary[alloc.TaskGroup] = tg
	return updateSummary(txn, index, sum, "summary")
}

// updateSummary stores sum, a changed copy of a stored job summary, as
// written at index; what names the change in an error.
func updateSummary(txn *memdb.Txn, index uint64, sum *structs.JobSummary, what string) error {
	sum.ModifyIndex = index
	if err := txn.Insert(TableJobSummary, sum); err != nil {
		return fmt.Errorf("state: updating %s of job %s: %w", what, sum.JobID, err)
	}
	return setIndex(txn, TableJobSummary, index)
}

// countClientStatus adds delta to the counter for status, never going
// below zero (allocs restored from an old snapshot may not have been
// counted).
func countClientStatus(tg *structs.TaskGroupSummary, status string, delta int) {
	var c *int
	switch status {
	case structs.AllocClientStatusPending:
		c = &tg.Starting
	case structs.AllocClientStatusRunning:
		c = &tg.Running
	case structs.AllocClientStatusComplete:
		c = &tg.Complete
	case structs.AllocClientStatusFailed:
		c = &tg.Failed
	case structs.AllocClientStatusLost:
		c = &tg.Lost
	case structs.AllocClientStatusUnknown:
		c = &tg.Unknown
	default:
		return
	}
	addClamped(c, delta)
}

// updateSummaryWithEval sets Queued from the eval's count of allocations it
// could not place yet. The newest eval to report wins: raft order is the
// order the scheduler learned them in.
func updateSummaryWithEval(txn *memdb.Txn, index uint64, eval *structs.Evaluation) error {
	if eval.QueuedAllocations == nil || eval.Type == structs.JobTypeCore {
		return nil
	}
	summary, err := jobSummaryTxn(txn, nil, eval.Namespace, eval.JobID)
	if err != nil || summary == nil {
		return err
	}
	sum := summary.Copy()
	changed := false
	for tgName, queued := range eval.QueuedAllocations {
		tg, ok := sum.Summary[tgName]
		if !ok || tg.Queued == queued {
			continue
		}
		tg.Queued = queued
		sum.Summary[tgName] = tg
		changed = true
	}
	if !changed {
		return nil
	}
	return updateSummary(txn, index, sum, "summary")
}

// adjustChildrenSummary moves one child of a periodic or parameterized
// parent from status `from` to status `to` in the parent's children counts
// ("" means the child did not exist / no longer exists).
func adjustChildrenSummary(txn *memdb.Txn, index uint64, namespace, parentID, from, to string) error {
	if from == to {
		return nil
	}
	summary, err := jobSummaryTxn(txn, nil, namespace, parentID)
	if err != nil || summary == nil {
		return err
	}
	sum := summary.Copy()
	if sum.Children == nil {
		sum.Children = &structs.JobChildrenSummary{}
	}
	countChild(sum.Children, from, -1)
	countChild(sum.Children, to, +1)
	return updateSummary(txn, index, sum, "children")
}

func countChild(c *structs.JobChildrenSummary, status string, delta int64) {
	var p *int64
	switch status {
	case structs.JobStatusPending:
		p = &c.Pending
	case structs.JobStatusRunning:
		p = &c.Running
	case structs.JobStatusDead:
		p = &c.Dead
	default:
		return
	}
	addClamped(p, delta)
}

// addClamped adds delta to the counter *c, never taking it below zero.
func addClamped[T int | int64](c *T, delta T) {
	*c += delta
	if *c < 0 {
		*c = 0
	}
}
