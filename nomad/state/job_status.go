package state

import (
	"fmt"
	"sort"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// jobStatusTxn derives a job's status from its allocations and evals:
//
//   - a periodic or parameterized parent is running until it is stopped;
//   - any non-terminal alloc makes the job running;
//   - otherwise a stopped job is dead;
//   - otherwise a non-terminal eval (pending, blocked) makes it pending;
//   - otherwise, if it ever had an alloc or eval, it is dead (a batch job
//     that finished); a job with neither is pending, unless evalDelete says
//     its evals were just garbage collected, in which case it stays dead.
//
// Only allocs and evals of the job's current incarnation count: after a
// purge and re-register, the old job's leftovers do not decide the status
// of the new one.
func jobStatusTxn(txn *memdb.Txn, job *structs.Job, evalDelete bool) (string, error) {
	if job.IsPeriodic() || job.IsParameterized() {
		if job.Stop {
			return structs.JobStatusDead, nil
		}
		return structs.JobStatusRunning, nil
	}
	allocs, err := txn.Get(TableAllocs, "job", job.Namespace, job.ID)
	if err != nil {
		return "", fmt.Errorf("state: allocs of job %s: %w", job.ID, err)
	}
	hasAlloc := false
	for raw := allocs.Next(); raw != nil; raw = allocs.Next() {
		a := raw.(*structs.Allocation)
		if a.Job != nil && a.Job.CreateIndex != job.CreateIndex {
			continue
		}
		hasAlloc = true
		if !a.TerminalStatus() {
			return structs.JobStatusRunning, nil
		}
	}
	if job.Stop {
		return structs.JobStatusDead, nil
	}
	evals, err := txn.Get(TableEvals, "job_prefix", job.Namespace, job.ID, "")
	if err != nil {
		return "", fmt.Errorf("state: evals of job %s: %w", job.ID, err)
	}
	hasEval := false
	for raw := evals.Next(); raw != nil; raw = evals.Next() {
		e := raw.(*structs.Evaluation)
		if e.CreateIndex < job.CreateIndex {
			continue
		}
		if !e.TerminalStatus() {
			return structs.JobStatusPending, nil
		}
		hasEval = true
	}
	if hasAlloc || hasEval || evalDelete {
		return structs.JobStatusDead, nil
	}
	return structs.JobStatusPending, nil
}

// jobSet collects the jobs a write touched, so their status is recomputed
// once per transaction, after every alloc and eval of the write is in.
type jobSet map[structs.NamespacedID]struct{}

func (js jobSet) add(namespace, id string) {
	if id != "" {
		js[structs.NamespacedID{Namespace: namespace, ID: id}] = struct{}{}
	}
}

// sorted returns the jobs in a fixed order so every server writes them in
// the same order (the result is the same either way; this keeps it obvious).
func (js jobSet) sorted() []structs.NamespacedID {
	out := make([]structs.NamespacedID, 0, len(js))
	for k := range js {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// setJobStatuses recomputes the status of every job in js and stores the
// ones that changed.
func setJobStatuses(txn *memdb.Txn, index uint64, js jobSet, evalDelete bool) error {
	for _, id := range js.sorted() {
		if err := setJobStatus(txn, index, id.Namespace, id.ID, evalDelete); err != nil {
			return err
		}
	}
	return nil
}

func setJobStatus(txn *memdb.Txn, index uint64, namespace, jobID string, evalDelete bool) error {
	job, err := jobByIDTxn(txn, nil, namespace, jobID)
	if err != nil || job == nil {
		return err
	}
	status, err := jobStatusTxn(txn, job, evalDelete)
	if err != nil {
		return err
	}
	if status == job.Status {
		return nil
	}
	updated := job.Copy()
	updated.Status = status
	updated.ModifyIndex = index
	if err := txn.Insert(TableJobs, updated); err != nil {
		return fmt.Errorf("state: updating status of job %s: %w", jobID, err)
	}
	// Keep the history entry of the current version in step, so
	// JobByIDAndVersion(current) agrees with JobByID.
	if v, err := jobByIDAndVersionTxn(txn, nil, namespace, jobID, job.Version); err != nil {
		return err
	} else if v != nil {
		if err := txn.Insert(TableJobVersion, updated); err != nil {
			return fmt.Errorf("state: updating job version status: %w", err)
		}
	}
	if job.ParentID != "" {
		if err := adjustChildrenSummary(txn, index, namespace, job.ParentID, job.Status, status); err != nil {
			return err
		}
	}
	return setIndexes(txn, index, TableJobs, TableJobVersion)
}
