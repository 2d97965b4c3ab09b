package state

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// JobScale is one scaling request as it is applied: set Group's count to
// Count (nil: only record Event), if the job's JobModifyIndex is still
// JobModifyIndex (0: whatever it is). SubmitTime, Eval and Event carry the
// time and IDs the leader chose.
type JobScale struct {
	Namespace      string
	JobID          string
	Group          string
	Count          *int64
	JobModifyIndex uint64
	SubmitTime     int64
	Eval           *structs.Evaluation
	Event          *structs.ScalingEvent
}

// CheckJobScale decides, on the current state, whether sc may be applied,
// exactly as Txn.ScaleJob will: the job must exist, the group and count
// must pass structs.CheckScale, a conditional request must match the
// job's JobModifyIndex, and a count change is refused while a deployment
// of the job is active. It returns the job as it is now.
func (s *StateStore) CheckJobScale(ws memdb.WatchSet, sc JobScale) (*structs.Job, error) {
	return checkJobScaleTxn(s.readTxn(), ws, sc)
}

func checkJobScaleTxn(txn *memdb.Txn, ws memdb.WatchSet, sc JobScale) (*structs.Job, error) {
	ns := nsOrDefault(sc.Namespace)
	job, err := jobByIDTxn(txn, ws, ns, sc.JobID)
	if err != nil {
		return nil, err
	}
	if job == nil {
		return nil, fmt.Errorf("job %q: %w", sc.JobID, structs.ErrNotFound)
	}
	if _, err := structs.CheckScale(job, sc.Group, sc.Count); err != nil {
		return nil, err
	}
	if sc.Count == nil {
		return job, nil
	}
	if sc.JobModifyIndex != 0 && sc.JobModifyIndex != job.JobModifyIndex {
		return nil, fmt.Errorf("%w %d: job exists with conflicting job modify index: %d",
			structs.ErrIndexConflict, sc.JobModifyIndex, job.JobModifyIndex)
	}
	ds, err := deploymentsByJobTxn(txn, ws, ns, sc.JobID, false)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		if d.Active() {
			return nil, structs.ErrScalingBlocked
		}
	}
	return job, nil
}

// ScaleJob applies a scaling request, after checking it
// again with CheckJobScale against the state it applies to. With a count,
// the job is registered again with the group's new count (a new version
// if the count changed, as any register) and the request's eval is
// written, stamped with the stored job's JobModifyIndex. The event is
// always recorded, first in its group's list, with PreviousCount the
// group's count as this apply found it. A refused request changes
// nothing, since the caller's transaction is not committed.
func (tx *Txn) ScaleJob(sc JobScale) error {
	mtxn, index := tx.txn, tx.index
	job, err := checkJobScaleTxn(mtxn, nil, sc)
	if err != nil {
		return err
	}
	if sc.Event == nil {
		return fmt.Errorf("state: scaling request for job %s group %s has no event", sc.JobID, sc.Group)
	}
	// The count before the request is the one this apply replaces, which
	// may differ from what the leader read if the job changed meanwhile.
	event := sc.Event.Copy()
	event.PreviousCount = int64(job.LookupTaskGroup(sc.Group).Count)
	if sc.Count != nil {
		scaled := job.Copy()
		scaled.LookupTaskGroup(sc.Group).Count = int(*sc.Count)
		if sc.SubmitTime != 0 {
			scaled.SubmitTime = sc.SubmitTime
		}
		if err := upsertJobTxn(mtxn, index, scaled); err != nil {
			return fmt.Errorf("scaling job %s: %w", job.ID, err)
		}
		if sc.Eval != nil {
			stored, err := jobByIDTxn(mtxn, nil, job.Namespace, job.ID)
			if err != nil {
				return err
			}
			e := sc.Eval.Copy()
			e.JobModifyIndex = stored.JobModifyIndex
			if err := upsertEvalsTxn(mtxn, index, []*structs.Evaluation{e}, tx.jobs); err != nil {
				return err
			}
		}
	}
	return upsertScalingEventTxn(mtxn, index, job.Namespace, job.ID, sc.Group, event)
}
