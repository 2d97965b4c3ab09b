package state

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// UpsertJob registers a job or a new version of it. The store, not the
// caller, decides the indexes and the version: CreateIndex is kept from the
// existing job; Version and JobModifyIndex move only when the user-facing
// spec changed (so re-running an unchanged jobspec is a no-op for the
// scheduler, which compares JobModifyIndex); ModifyIndex always moves. The
// job's summary and status are brought up to date in the same transaction.
func (tx *Txn) UpsertJob(job *structs.Job) error {
	return upsertJobTxn(tx.txn, tx.index, job)
}

// UpsertJobWithEval registers a job and the evaluation that schedules it
// in one transaction, so no reader ever sees the new version without its
// eval. The eval's JobModifyIndex is set to the stored job's, which only
// the store knows (an unchanged re-register keeps the old one).
func (tx *Txn) UpsertJobWithEval(job *structs.Job, eval *structs.Evaluation) error {
	txn, index := tx.txn, tx.index
	if err := upsertJobTxn(txn, index, job); err != nil {
		return err
	}
	if eval == nil {
		return nil
	}
	ns := job.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	stored, err := jobByIDTxn(txn, nil, ns, job.ID)
	if err != nil {
		return err
	}
	e := eval.Copy()
	e.JobModifyIndex = stored.JobModifyIndex
	js := jobSet{}
	if err := upsertEvalsTxn(txn, index, []*structs.Evaluation{e}, js); err != nil {
		return err
	}
	return setJobStatuses(txn, index, js, false)
}

func upsertJobTxn(txn *memdb.Txn, index uint64, job *structs.Job) error {
	if job == nil || job.ID == "" {
		return fmt.Errorf("state: a job to upsert must have an ID")
	}
	j := job.Copy()
	if j.Namespace == "" {
		j.Namespace = structs.DefaultNamespace
	}
	existing, err := jobByIDTxn(txn, nil, j.Namespace, j.ID)
	if err != nil {
		return err
	}
	newVersion := true
	prevStatus := ""
	if existing != nil {
		prevStatus = existing.Status
		j.CreateIndex = existing.CreateIndex
		if existing.SpecChanged(j) {
			j.Version = existing.Version + 1
			j.JobModifyIndex = index
			j.Stable = false
		} else {
			newVersion = false
			j.Version = existing.Version
			j.JobModifyIndex = existing.JobModifyIndex
			j.Stable = existing.Stable
			j.SubmitTime = existing.SubmitTime
		}
	} else {
		j.CreateIndex = index
		j.JobModifyIndex = index
		j.Version = 0
	}
	j.ModifyIndex = index

	if j.Status, err = jobStatusTxn(txn, j, false); err != nil {
		return err
	}
	if err := ensureJobSummary(txn, index, j); err != nil {
		return err
	}
	if err := txn.Insert(TableJobs, j); err != nil {
		return fmt.Errorf("state: inserting job %s: %w", j.ID, err)
	}
	if err := upsertJobVersion(txn, j, newVersion); err != nil {
		return err
	}
	if j.ParentID != "" && prevStatus != j.Status {
		if err := adjustChildrenSummary(txn, index, j.Namespace, j.ParentID, prevStatus, j.Status); err != nil {
			return err
		}
	}
	return setIndexes(txn, index, TableJobs, TableJobVersion, TableJobSummary)
}

// DeleteJob removes a job with its versions, summary and scaling events.
// Its allocs and evals stay until garbage collection removes them, which
// happens only once they are terminal.
func (tx *Txn) DeleteJob(namespace, jobID string) error {
	txn, index := tx.txn, tx.index
	existing, err := jobByIDTxn(txn, nil, namespace, jobID)
	if err != nil {
		return err
	}
	if existing == nil {
		return fmt.Errorf("job %s/%s: %w", namespace, jobID, structs.ErrNotFound)
	}
	return deleteJobTxn(txn, index, existing)
}

// deleteJobTxn is DeleteJob of a job known to exist, inside a larger write.
func deleteJobTxn(txn *memdb.Txn, index uint64, existing *structs.Job) error {
	namespace, jobID := existing.Namespace, existing.ID
	if err := txn.Delete(TableJobs, existing); err != nil {
		return fmt.Errorf("state: deleting job %s: %w", jobID, err)
	}
	versions, err := jobVersionsTxn(txn, nil, namespace, jobID)
	if err != nil {
		return err
	}
	for _, v := range versions {
		if err := txn.Delete(TableJobVersion, v); err != nil {
			return fmt.Errorf("state: deleting job %s version %d: %w", jobID, v.Version, err)
		}
	}
	if _, err := txn.DeleteAll(TableJobSummary, "id", namespace, jobID); err != nil {
		return fmt.Errorf("state: deleting summary of job %s: %w", jobID, err)
	}
	if err := deleteScalingEventsTxn(txn, index, namespace, jobID); err != nil {
		return err
	}
	if err := deleteServiceRegistrationsTxn(txn, index, "job", namespace, jobID); err != nil {
		return err
	}
	if existing.ParentID != "" {
		if err := adjustChildrenSummary(txn, index, namespace, existing.ParentID, existing.Status, ""); err != nil {
			return err
		}
	}
	return setIndexes(txn, index, TableJobs, TableJobVersion, TableJobSummary)
}

// UpdateJobStability marks one version of a job stable (a deployment of it
// succeeded) or not. Auto-revert goes back to the newest stable version.
func (tx *Txn) UpdateJobStability(namespace, jobID string, version uint64, stable bool) error {
	txn, index := tx.txn, tx.index
	return updateJobStabilityTxn(txn, index, namespace, jobID, version, stable)
}

// updateJobStabilityTxn is UpdateJobStability inside txn, for a write that
// also completes the deployment of that version.
func updateJobStabilityTxn(txn *memdb.Txn, index uint64, namespace, jobID string, version uint64, stable bool) error {
	v, err := jobByIDAndVersionTxn(txn, nil, namespace, jobID, version)
	if err != nil {
		return err
	}
	if v == nil {
		return fmt.Errorf("job %s/%s version %d: %w", namespace, jobID, version, structs.ErrNotFound)
	}
	return setJobStabilityTxn(txn, index, v, stable)
}

// markJobStableTxn marks the version d deployed stable when d succeeded. A
// version already trimmed from the history, or a job purged (and perhaps
// registered again) meanwhile, is skipped: the deployment's success still
// stands.
func markJobStableTxn(txn *memdb.Txn, index uint64, d *structs.Deployment) error {
	v, err := jobByIDAndVersionTxn(txn, nil, d.Namespace, d.JobID, d.JobVersion)
	if err != nil || v == nil || v.Stable || (d.JobCreateIndex != 0 && v.CreateIndex != d.JobCreateIndex) {
		return err
	}
	return setJobStabilityTxn(txn, index, v, true)
}

// setJobStabilityTxn stores stable on version v and, if v is the job's
// current version, on the job too.
func setJobStabilityTxn(txn *memdb.Txn, index uint64, v *structs.Job, stable bool) error {
	vc := v.Copy()
	vc.Stable = stable
	vc.ModifyIndex = index
	if err := txn.Insert(TableJobVersion, vc); err != nil {
		return fmt.Errorf("state: inserting job version: %w", err)
	}
	cur, err := jobByIDTxn(txn, nil, v.Namespace, v.ID)
	if err != nil {
		return err
	}
	if cur != nil && cur.Version == v.Version {
		cc := cur.Copy()
		cc.Stable = stable
		cc.ModifyIndex = index
		if err := txn.Insert(TableJobs, cc); err != nil {
			return fmt.Errorf("state: inserting job: %w", err)
		}
	}
	return setIndexes(txn, index, TableJobs, TableJobVersion)
}

// upsertJobVersion records j in the version history. An unchanged
// re-registration replaces the entry of the current version (its status or
// ModifyIndex may have moved); a new version is added and the history is
// trimmed to the newest structs.JobTrackedVersions, plus the newest stable
// version if it would otherwise fall off, because auto-revert needs it.
func upsertJobVersion(txn *memdb.Txn, j *structs.Job, newVersion bool) error {
	if err := txn.Insert(TableJobVersion, j); err != nil {
		return fmt.Errorf("state: inserting job %s version %d: %w", j.ID, j.Version, err)
	}
	if !newVersion {
		return nil
	}
	versions, err := jobVersionsTxn(txn, nil, j.Namespace, j.ID)
	if err != nil {
		return err
	}
	if len(versions) <= structs.JobTrackedVersions {
		return nil
	}
	keptStable := false
	for _, v := range versions[:structs.JobTrackedVersions] {
		keptStable = keptStable || v.Stable
	}
	for _, v := range versions[structs.JobTrackedVersions:] {
		if v.Stable && !keptStable {
			keptStable = true
			continue
		}
		if err := txn.Delete(TableJobVersion, v); err != nil {
			return fmt.Errorf("state: deleting job %s version %d: %w", j.ID, v.Version, err)
		}
	}
	return nil
}

// JobByID returns the current version of a job, or nil.
func (s *StateStore) JobByID(ws memdb.WatchSet, namespace, id string) (*structs.Job, error) {
	return jobByIDTxn(s.readTxn(), ws, namespace, id)
}

func jobByIDTxn(txn *memdb.Txn, ws memdb.WatchSet, namespace, id string) (*structs.Job, error) {
	obj, err := firstByKey(txn, ws, func(j *structs.Job) bool { return j.Namespace == namespace && j.ID == id }, TableJobs, "id", namespace, id)
	if err != nil {
		return nil, fmt.Errorf("state: job lookup: %w", err)
	}
	return obj, nil
}

// JobsByIDPrefix iterates over the jobs of a namespace whose ID starts
// with prefix.
func (s *StateStore) JobsByIDPrefix(ws memdb.WatchSet, namespace, prefix string) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableJobs, "id_prefix", namespace, prefix)
}

// Jobs iterates over every job of every namespace.
func (s *StateStore) Jobs(ws memdb.WatchSet) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableJobs, "id")
}

// JobsByNamespace iterates over the jobs of one namespace.
func (s *StateStore) JobsByNamespace(ws memdb.WatchSet, namespace string) (memdb.ResultIterator, error) {
	return s.JobsByIDPrefix(ws, namespace, "")
}

// JobsBySchedulerType iterates over the jobs of one type (service, batch,
// system, sysbatch).
func (s *StateStore) JobsBySchedulerType(ws memdb.WatchSet, jobType string) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableJobs, "type", jobType)
}

// JobsByGC iterates over the jobs that may (gc true) or may not be
// garbage collected; see JobIsGCable.
func (s *StateStore) JobsByGC(ws memdb.WatchSet, gc bool) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableJobs, "gc", gc)
}

// JobsByPeriodic iterates over the periodic (or non-periodic) jobs.
func (s *StateStore) JobsByPeriodic(ws memdb.WatchSet, periodic bool) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableJobs, "periodic", periodic)
}

// JobVersionsByID returns the tracked versions of a job, newest first.
func (s *StateStore) JobVersionsByID(ws memdb.WatchSet, namespace, id string) ([]*structs.Job, error) {
	return jobVersionsTxn(s.readTxn(), ws, namespace, id)
}

func jobVersionsTxn(txn *memdb.Txn, ws memdb.WatchSet, namespace, id string) ([]*structs.Job, error) {
	// The version index is Namespace+ID+Version; a prefix scan on the ID
	// also matches longer IDs ("web" matches "web-2"), so filter them out.
	iter, err := txn.GetReverse(TableJobVersion, "id_prefix", namespace, id)
	if err != nil {
		return nil, fmt.Errorf("state: job versions lookup: %w", err)
	}
	ws.Add(iter.WatchCh())
	var out []*structs.Job
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		if j := raw.(*structs.Job); j.ID == id {
			out = append(out, j)
		}
	}
	return out, nil
}

// JobByIDAndVersion returns one tracked version of a job, or nil.
func (s *StateStore) JobByIDAndVersion(ws memdb.WatchSet, namespace, id string, version uint64) (*structs.Job, error) {
	return jobByIDAndVersionTxn(s.readTxn(), ws, namespace, id, version)
}

func jobByIDAndVersionTxn(txn *memdb.Txn, ws memdb.WatchSet, namespace, id string, version uint64) (*structs.Job, error) {
	obj, err := firstByKey(txn, ws, func(j *structs.Job) bool { return j.Namespace == namespace && j.ID == id && j.Version == version }, TableJobVersion, "id", namespace, id, version)
	if err != nil {
		return nil, fmt.Errorf("state: job version lookup: %w", err)
	}
	return obj, nil
}

// JobVersions iterates over every tracked version of every job (for
// snapshot persistence).
func (s *StateStore) JobVersions(ws memdb.WatchSet) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableJobVersion, "id")
}
