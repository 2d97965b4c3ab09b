package state

import (
	"fmt"
	"time"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// UpsertDeployment creates or replaces a deployment. CreateIndex is kept
// on update; CreateTime and ModifyTime are stored as given.
func (tx *Txn) UpsertDeployment(d *structs.Deployment) error {
	return upsertDeploymentTxn(tx.txn, tx.index, d, 0)
}

// upsertDeploymentTxn stores a deployment. now is the time of the raft
// entry (0 for none): it becomes ModifyTime, and CreateTime of a new
// deployment that does not carry one, so deployment GC ages a deployment
// from its last change and not from the epoch.
func upsertDeploymentTxn(txn *memdb.Txn, index uint64, deployment *structs.Deployment, now int64) error {
	if deployment == nil {
		return nil
	}
	if deployment.ID == "" {
		return fmt.Errorf("state: deployment for job %s has no ID", deployment.JobID)
	}
	d := deployment.Copy()
	if d.Namespace == "" {
		d.Namespace = structs.DefaultNamespace
	}
	existing, err := deploymentByIDTxn(txn, nil, d.ID)
	if err != nil {
		return err
	}
	if existing != nil {
		d.CreateIndex = existing.CreateIndex
		d.CreateTime = existing.CreateTime
	} else {
		d.CreateIndex = index
		startProgressDeadlines(d, now)
	}
	if d.CreateTime == 0 {
		d.CreateTime = now
	}
	if now != 0 {
		d.ModifyTime = now
	}
	d.ModifyIndex = index
	if err := txn.Insert(TableDeployments, d); err != nil {
		return fmt.Errorf("state: inserting deployment %s: %w", d.ID, err)
	}
	return setIndex(txn, TableDeployments, index)
}

// startProgressDeadlines gives each group of a new deployment that has a
// progress deadline, and no time to meet it yet, its first one: the
// deadline after the entry's time now. Until a first alloc is healthy that
// is when the group must have made progress.
func startProgressDeadlines(d *structs.Deployment, now int64) {
	if now == 0 {
		return
	}
	for _, st := range d.TaskGroups {
		if st.ProgressDeadline > 0 && st.RequireProgressBy.IsZero() {
			st.RequireProgressBy = time.Unix(0, now).UTC().Add(st.ProgressDeadline)
		}
	}
}

// DeleteDeployment removes deployments (GC). Unknown IDs are skipped.
func (tx *Txn) DeleteDeployment(ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	txn := tx.txn
	for _, id := range ids {
		d, err := deploymentByIDTxn(txn, nil, id)
		if err != nil {
			return err
		}
		if d == nil {
			continue
		}
		if err := txn.Delete(TableDeployments, d); err != nil {
			return fmt.Errorf("state: deleting deployment %s: %w", id, err)
		}
	}
	return setIndex(txn, TableDeployments, tx.index)
}

// UpdateDeploymentStatus changes a deployment's status and, in the same
// write, registers the job version (auto-revert) and the eval that come
// with it.
//
// The deployment must still be active: the watcher and the endpoints
// decide on a snapshot, and a deployment that ended meanwhile (the
// scheduler completed it, a newer version cancelled it) keeps its ending,
// so an auto-revert decided on the old snapshot is not registered.
func (tx *Txn) UpdateDeploymentStatus(req *structs.DeploymentStatusUpdateRequest) error {
	txn, index := tx.txn, tx.index
	if u := req.DeploymentUpdate; u != nil {
		if _, err := activeDeploymentTxn(txn, u.DeploymentID, "change the status of"); err != nil {
			return err
		}
	}
	return deploymentOutcomeTxn(txn, index, req.DeploymentUpdate, req.Job, req.Eval, req.UpdatedAt)
}

// deploymentOutcomeTxn applies what a deployment write decides, each part
// optional: the status change, the job version an auto-revert registers,
// and the eval that acts on it.
func deploymentOutcomeTxn(txn *memdb.Txn, index uint64, u *structs.DeploymentStatusUpdate,
	job *structs.Job, eval *structs.Evaluation, now int64) error {
	if u != nil {
		if err := updateDeploymentStatusTxn(txn, index, u, now); err != nil {
			return err
		}
	}
	js := jobSet{}
	if job != nil {
		if err := upsertJobTxn(txn, index, job); err != nil {
			return err
		}
	}
	if eval != nil {
		if err := upsertEvalsTxn(txn, index, []*structs.Evaluation{eval}, js); err != nil {
			return err
		}
	}
	return setJobStatuses(txn, index, js, false)
}

// updateDeploymentStatusTxn sets a deployment's status at the entry's time
// now. A deployment that turns successful marks its job version stable, in
// the same write, so auto-revert always finds the newest version that
// deployed well.
func updateDeploymentStatusTxn(txn *memdb.Txn, index uint64, u *structs.DeploymentStatusUpdate, now int64) error {
	existing, err := deploymentByIDTxn(txn, nil, u.DeploymentID)
	if err != nil {
		return err
	}
	if existing == nil {
		return fmt.Errorf("deployment %s: %w", structs.ShortID(u.DeploymentID), structs.ErrNotFound)
	}
	d := existing.Copy()
	d.Status = u.Status
	d.StatusDescription = u.StatusDescription
	d.ModifyIndex = index
	if now != 0 {
		d.ModifyTime = now
	}
	if err := txn.Insert(TableDeployments, d); err != nil {
		return fmt.Errorf("state: updating deployment %s: %w", d.ID, err)
	}
	if d.Status == structs.DeploymentStatusSuccessful && existing.Status != structs.DeploymentStatusSuccessful {
		if err := markJobStableTxn(txn, index, d); err != nil {
			return err
		}
	}
	return setIndex(txn, TableDeployments, index)
}

// updateDeploymentWithAlloc keeps a deployment's per-group counts in step
// with its allocs: a new alloc counts as placed (and as a canary if it is
// one); a client's health report moves it to healthy or unhealthy. A
// healthy alloc pushes the group's progress deadline out, measured from the
// client's health timestamp so every server computes the same value.
func updateDeploymentWithAlloc(txn *memdb.Txn, index uint64, a, existing *structs.Allocation) error {
	if a.DeploymentID == "" {
		return nil
	}
	d, err := deploymentByIDTxn(txn, nil, a.DeploymentID)
	if err != nil || d == nil {
		return err
	}
	if st := d.TaskGroups[a.TaskGroup]; st == nil {
		return nil
	}
	sameDeployment := existing != nil && existing.DeploymentID == a.DeploymentID
	placed := !sameDeployment
	canary := placed && a.DeploymentStatus != nil && a.DeploymentStatus.Canary
	var before, after *bool
	if sameDeployment && existing.DeploymentStatus != nil {
		before = existing.DeploymentStatus.Healthy
	}
	if a.DeploymentStatus != nil {
		after = a.DeploymentStatus.Healthy
	}
	healthChanged := after != nil && (before == nil || *before != *after)
	if !placed && !healthChanged {
		return nil
	}
	c := d.Copy()
	st := c.TaskGroups[a.TaskGroup]
	if placed {
		st.PlacedAllocs++
	}
	if canary {
		st.PlacedCanaries = append(st.PlacedCanaries, a.ID)
	}
	if healthChanged {
		if before != nil {
			if *before {
				st.HealthyAllocs--
			} else {
				st.UnhealthyAllocs--
			}
		}
		if ts := a.DeploymentStatus.Timestamp; !ts.IsZero() {
			c.ModifyTime = ts.UnixNano()
		}
		if *after {
			st.HealthyAllocs++
			if ts := a.DeploymentStatus.Timestamp; st.ProgressDeadline > 0 && !ts.IsZero() {
				st.RequireProgressBy = ts.Add(st.ProgressDeadline)
			}
		} else {
			st.UnhealthyAllocs++
		}
	}
	c.ModifyIndex = index
	if err := txn.Insert(TableDeployments, c); err != nil {
		return fmt.Errorf("state: updating deployment %s: %w", c.ID, err)
	}
	return setIndex(txn, TableDeployments, index)
}

// DeploymentByID returns the deployment, or nil.
func (s *StateStore) DeploymentByID(ws memdb.WatchSet, id string) (*structs.Deployment, error) {
	return deploymentByIDTxn(s.readTxn(), ws, id)
}

func deploymentByIDTxn(txn *memdb.Txn, ws memdb.WatchSet, id string) (*structs.Deployment, error) {
	obj, err := firstByKey(txn, ws, func(d *structs.Deployment) bool { return d.ID == id }, TableDeployments, "id", id)
	if err != nil {
		return nil, fmt.Errorf("state: deployment lookup: %w", err)
	}
	return obj, nil
}

// DeploymentsByJobID returns a job's deployments. Unless all, only those of
// the job's current incarnation (same JobCreateIndex) are returned.
func (s *StateStore) DeploymentsByJobID(ws memdb.WatchSet, namespace, jobID string, all bool) ([]*structs.Deployment, error) {
	return deploymentsByJobTxn(s.readTxn(), ws, namespace, jobID, all)
}

func deploymentsByJobTxn(txn *memdb.Txn, ws memdb.WatchSet, namespace, jobID string, all bool) ([]*structs.Deployment, error) {
	var job *structs.Job
	if !all {
		var err error
		if job, err = jobByIDTxn(txn, ws, namespace, jobID); err != nil {
			return nil, err
		}
	}
	iter, err := getWatch(txn, ws, TableDeployments, "job", namespace, jobID)
	if err != nil {
		return nil, err
	}
	var out []*structs.Deployment
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		d := raw.(*structs.Deployment)
		if job != nil && d.JobCreateIndex != job.CreateIndex {
			continue
		}
		out = append(out, d)
	}
	return out, nil
}

// LatestDeploymentByJobID returns the job's newest deployment (highest
// CreateIndex) of its current incarnation, or nil.
func (s *StateStore) LatestDeploymentByJobID(ws memdb.WatchSet, namespace, jobID string) (*structs.Deployment, error) {
	ds, err := deploymentsByJobTxn(s.readTxn(), ws, namespace, jobID, false)
	if err != nil {
		return nil, err
	}
	var latest *structs.Deployment
	for _, d := range ds {
		if latest == nil || d.CreateIndex > latest.CreateIndex {
			latest = d
		}
	}
	return latest, nil
}

// Deployments iterates over every deployment.
func (s *StateStore) Deployments(ws memdb.WatchSet) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableDeployments, "id")
}
