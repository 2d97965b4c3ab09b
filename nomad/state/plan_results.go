package state

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// UpsertPlanResults applies a committed plan as one transaction: the
// deployment and its status updates, the stops (AllocsStopped), the
// placements and in-place or unknown updates (AllocsUpdated), and the evals
// for preempted jobs. Either all of it is applied or, if any alloc change
// breaks the allocation state machine, none of it.
func (tx *Txn) UpsertPlanResults(req *structs.ApplyPlanResultsRequest) error {
	txn, index := tx.txn, tx.index
	if err := upsertDeploymentTxn(txn, index, req.Deployment, req.UpdatedAt); err != nil {
		return err
	}
	for _, u := range req.DeploymentUpdates {
		if err := applyPlanDeploymentUpdate(txn, index, u, req.UpdatedAt); err != nil {
			return err
		}
	}
	js := jobSet{}
	for _, stop := range req.AllocsStopped {
		if err := applyAllocStopTxn(txn, index, stop, req.UpdatedAt, js); err != nil {
			return err
		}
	}
	for _, a := range req.AllocsUpdated {
		if err := upsertAllocServerTxn(txn, index, a, req.Job, req.UpdatedAt, js); err != nil {
			return err
		}
	}
	if err := setIndex(txn, TableAllocs, index); err != nil {
		return err
	}
	if err := upsertEvalsTxn(txn, index, req.PreemptionEvals, js); err != nil {
		return err
	}
	return setJobStatuses(txn, index, js, false)
}

// applyAllocStopTxn merges a plan's stop onto the stored alloc. The plan's
// copy may be trimmed or stale, so only what a stop decides is taken:
// DesiredStatus (stop, or evict for a preemption), DesiredDescription, a
// lost mark, FollowupEvalID, NextAllocation, PreemptedByAllocation and the AllocStates
// history the scheduler appended to. A stop for an alloc that was garbage
// collected meanwhile is skipped.
func applyAllocStopTxn(txn *memdb.Txn, index uint64, stop *structs.Allocation, updatedAt int64, js jobSet) error {
	if stop == nil {
		return nil
	}
	existing, err := allocByIDTxn(txn, nil, stop.ID)
	if err != nil || existing == nil {
		return err
	}
	a := existing.Copy()
	a.DesiredStatus = stop.DesiredStatus
	if a.DesiredStatus == "" {
		a.DesiredStatus = structs.AllocDesiredStatusStop
	}
	a.DesiredDescription = stop.DesiredDescription
	if stop.ClientStatus == structs.AllocClientStatusLost && !existing.ClientTerminalStatus() {
		a.ClientStatus = structs.AllocClientStatusLost
		if stop.ClientDescription != "" {
			a.ClientDescription = stop.ClientDescription
		}
	}
	if err := structs.ValidateServerUpdate(existing, a); err != nil {
		return err
	}
	if stop.FollowupEvalID != "" {
		a.FollowupEvalID = stop.FollowupEvalID
	}
	if stop.NextAllocation != "" {
		a.NextAllocation = stop.NextAllocation
	}
	if stop.PreemptedByAllocation != "" {
		a.PreemptedByAllocation = stop.PreemptedByAllocation
	}
	if len(stop.AllocStates) > 0 {
		a.AllocStates = make([]*structs.AllocState, len(stop.AllocStates))
		for i, st := range stop.AllocStates {
			c := *st
			a.AllocStates[i] = &c
		}
	}
	a.ModifyIndex = index
	a.AllocModifyIndex = index
	if updatedAt != 0 {
		a.ModifyTime = updatedAt
	}
	internAllocFields(a)
	if err := insertAlloc(txn, index, a, existing, js); err != nil {
		return fmt.Errorf("applying stop of alloc %s: %w", structs.ShortID(a.ID), err)
	}
	return nil
}

// applyPlanDeploymentUpdate applies a scheduler's status change of a
// deployment at the entry's time now. The scheduler decided on a
// snapshot: if the deployment has since ended (the watcher failed it,
// another eval completed or cancelled it) or was garbage collected, the
// change is skipped rather than refused, as a terminal deployment's status
// is final and the rest of the plan is still good. A deployment completed
// successfully marks its job version stable (updateDeploymentStatusTxn).
func applyPlanDeploymentUpdate(txn *memdb.Txn, index uint64, u *structs.DeploymentStatusUpdate, now int64) error {
	d, err := deploymentByIDTxn(txn, nil, u.DeploymentID)
	if err != nil || d == nil || !d.Active() {
		return err
	}
	return updateDeploymentStatusTxn(txn, index, u, now)
}
