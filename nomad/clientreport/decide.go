package clientreport

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/structs"
)

// Reader is what Decide reads of the state store.
type Reader interface {
	AllocByID(ws memdb.WatchSet, id string) (*structs.Allocation, error)
	NodeByID(ws memdb.WatchSet, id string) (*structs.Node, error)
	JobByID(ws memdb.WatchSet, namespace, id string) (*structs.Job, error)
}

// Input is one raft entry of client reports and the state it applies to.
type Input struct {
	State   Reader
	Reports []*structs.Allocation
	// UpdatedAt is the entry's time (the endpoint's clock, carried in
	// the entry), given to every update and evaluation.
	UpdatedAt int64
	// Index is the entry's raft index; evaluation IDs derive from it.
	Index uint64
	// Evals came in the entry itself (entries written by servers that
	// built them in the endpoint). Decide keeps them and adds none for a
	// job that already has one.
	Evals []*structs.Evaluation
}

// Decision is what the entry writes, in one transaction.
type Decision struct {
	// Updates carry the reported client fields, ModifyTime set.
	Updates []*structs.Allocation
	Evals   []*structs.Evaluation
	// Freed are the nodes where an allocation finished: their capacity
	// changed.
	Freed []*structs.Node
}

// Decide judges the reports. It fails, and then nothing is written, for a
// node not ready (wrapping structs.ErrNodeNotReady), a transition no
// client may make from the status in state, or a state read failing.
func Decide(in Input) (Decision, error) {
	var d Decision
	d.Evals = append(d.Evals, in.Evals...)
	hasEval := map[structs.NamespacedID]bool{}
	for _, e := range in.Evals {
		hasEval[e.NamespacedJobID()] = true
	}
	nodes := map[string]*structs.Node{}
	freed := map[string]bool{}
	for _, report := range in.Reports {
		existing, err := in.State.AllocByID(nil, report.ID)
		if err != nil {
			return Decision{}, err
		}
		if existing == nil || existing.ClientTerminalStatus() || existing.StaleClientReport(report) {
			continue
		}
		node, ok := nodes[existing.NodeID]
		if !ok {
			if node, err = in.State.NodeByID(nil, existing.NodeID); err != nil {
				return Decision{}, err
			}
			nodes[existing.NodeID] = node
		}
		if node == nil || node.Status != structs.NodeStatusReady {
			status := "gone"
			if node != nil {
				status = node.Status
			}
			return Decision{}, fmt.Errorf("node %s is %s, heartbeat first: %w", existing.NodeID, status, structs.ErrNodeNotReady)
		}
		if err := structs.ValidateClientTransition(structs.ActorClient, existing.ClientStatus, report.ClientStatus); err != nil {
			return Decision{}, fmt.Errorf("alloc %s: %w", structs.ShortID(existing.ID), err)
		}
		u := report.Copy()
		u.ModifyTime = in.UpdatedAt
		d.Updates = append(d.Updates, u)
		if structs.ClientTerminalStatus(u.ClientStatus) && !freed[node.ID] {
			freed[node.ID] = true
			d.Freed = append(d.Freed, node)
		}
		trigger := Trigger(existing, u)
		key := existing.NamespacedJobID()
		if trigger == "" || existing.Job == nil || hasEval[key] {
			continue
		}
		hasEval[key] = true
		job, err := in.State.JobByID(nil, existing.Namespace, existing.JobID)
		if err != nil {
			return Decision{}, err
		}
		if job == nil {
			job = existing.Job
		}
		d.Evals = append(d.Evals, &structs.Evaluation{
			ID:        evalID(in.Index, key),
			Namespace: existing.Namespace, Priority: job.Priority, Type: job.Type,
			TriggeredBy: trigger, JobID: existing.JobID, NodeID: existing.NodeID,
			Status: structs.EvalStatusPending, CreateTime: in.UpdatedAt, ModifyTime: in.UpdatedAt,
		})
	}
	sort.SliceStable(d.Evals[len(in.Evals):], func(i, j int) bool {
		rest := d.Evals[len(in.Evals):]
		return rest[i].JobID < rest[j].JobID
	})
	return d, nil
}

// Trigger says which evaluation, if any, the report of existing as
// report's status needs (see the package doc).
func Trigger(existing, report *structs.Allocation) string {
	switch {
	case existing.NeedsToReconnect() && report.ClientStatus != structs.AllocClientStatusUnknown:
		return structs.EvalTriggerReconnect
	case report.ClientStatus == structs.AllocClientStatusFailed && existing.ClientStatus != structs.AllocClientStatusFailed &&
		!existing.ServerTerminalStatus():
		return structs.EvalTriggerRetryFailedAlloc
	case report.ClientStatus == structs.AllocClientStatusComplete && existing.ClientStatus != structs.AllocClientStatusComplete &&
		!existing.ServerTerminalStatus() && existing.Job != nil &&
		(existing.Job.Type == structs.JobTypeService || existing.Job.Type == structs.JobTypeSystem):
		return structs.EvalTriggerAllocStop
	}
	return ""
}

// evalID is the ID of the entry's evaluation for one job: the same on
// every server, and unique, since one entry makes at most one per job.
func evalID(index uint64, job structs.NamespacedID) string {
	return structs.DerivedID("client-report", strconv.FormatUint(index, 10), job.Namespace, job.ID)
}
