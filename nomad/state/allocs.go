package state

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// UpsertAllocs writes allocations decided by a server (plan results, and
// tests building a state). New allocs get CreateIndex = ModifyIndex =
// AllocModifyIndex = index and start pending if no client status is given.
//
// For an existing alloc the servers own only their fields: the client's
// ClientStatus, ClientDescription, TaskStates, NetworkStatus and deployment
// health are kept from the stored record, because the server's copy came
// from a snapshot the client may have reported past since. The one
// exception is a server marking the alloc lost or unknown (node down or
// disconnected). Every change is checked with structs.ValidateServerUpdate;
// one bad alloc rejects the whole batch. AllocModifyIndex moves to index:
// it is what clients watch to learn that the servers changed their allocs.
//
// An alloc without a Job gets the stored one (its own previous job, or the
// job's current version for a new alloc).
func (tx *Txn) UpsertAllocs(allocs []*structs.Allocation) error {
	txn, index := tx.txn, tx.index
	js := jobSet{}
	for _, a := range allocs {
		if err := upsertAllocServerTxn(txn, index, a, nil, 0, js); err != nil {
			return err
		}
	}
	if err := setIndex(txn, TableAllocs, index); err != nil {
		return err
	}
	return setJobStatuses(txn, index, js, false)
}

// upsertAllocServerTxn is UpsertAllocs for one alloc inside a larger
// write. defaultJob is attached to allocs that carry no job; updatedAt, if
// not zero, stamps ModifyTime (and CreateTime of a new alloc).
func upsertAllocServerTxn(txn *memdb.Txn, index uint64, alloc *structs.Allocation, defaultJob *structs.Job, updatedAt int64, js jobSet) error {
	if alloc == nil {
		return nil
	}
	a := alloc.Copy()
	if a.Namespace == "" {
		a.Namespace = structs.DefaultNamespace
	}
	existing, err := allocByIDTxn(txn, nil, a.ID)
	if err != nil {
		return err
	}
	internServerAlloc(a, existing)
	if existing == nil {
		if err := prepareNewAlloc(txn, a, defaultJob); err != nil {
			return err
		}
		a.CreateIndex = index
		if updatedAt != 0 && a.CreateTime == 0 {
			a.CreateTime = updatedAt
		}
		if err := linkPreviousAllocTxn(txn, index, a); err != nil {
			return err
		}
	} else {
		if err := mergeServerUpdate(existing, a); err != nil {
			return err
		}
		if a.Job == nil {
			a.Job = defaultJob
		}
		if a.Job == nil {
			a.Job = existing.Job
		}
		a.CreateIndex = existing.CreateIndex
		a.CreateTime = existing.CreateTime
	}
	a.ModifyIndex = index
	a.AllocModifyIndex = index
	if updatedAt != 0 {
		a.ModifyTime = updatedAt
	}
	return insertAlloc(txn, index, a, existing, js)
}

// prepareNewAlloc checks and completes an alloc about to be created.
func prepareNewAlloc(txn *memdb.Txn, a *structs.Allocation, defaultJob *structs.Job) error {
	if a.ID == "" {
		return fmt.Errorf("state: alloc for job %s has no ID", a.JobID)
	}
	if a.ClientStatus == "" {
		a.ClientStatus = structs.AllocClientStatusPending
	}
	if !structs.ValidClientStatus(a.ClientStatus) {
		return fmt.Errorf("alloc %s: %w: client status %q is not valid", structs.ShortID(a.ID), structs.ErrInvalidTransition, a.ClientStatus)
	}
	if a.DesiredStatus != "" {
		if err := structs.ValidateDesiredTransition("", a.DesiredStatus); err != nil {
			return fmt.Errorf("alloc %s: %w", structs.ShortID(a.ID), err)
		}
	}
	if a.Job == nil {
		a.Job = defaultJob
	}
	if a.Job == nil {
		job, err := jobByIDTxn(txn, nil, a.Namespace, a.JobID)
		if err != nil {
			return err
		}
		if job == nil {
			return fmt.Errorf("alloc %s: job %s/%s: %w", structs.ShortID(a.ID), a.Namespace, a.JobID, structs.ErrNotFound)
		}
		a.Job = job
	}
	return nil
}

// mergeServerUpdate turns a, a server's version of existing, into the
// record to store: client-owned fields come from existing unless the
// server is marking the alloc lost or unknown. A lost or unknown mark on an
// alloc the client already reported terminal is dropped rather than
// refused: the scheduler decided on an older snapshot, the client's final
// word is the better record, and failing would throw away the rest of the
// plan for a change that cannot matter.
func mergeServerUpdate(existing, a *structs.Allocation) error {
	serverMark := (a.ClientStatus == structs.AllocClientStatusLost || a.ClientStatus == structs.AllocClientStatusUnknown) &&
		a.ClientStatus != existing.ClientStatus && !existing.ClientTerminalStatus()
	if !serverMark {
		a.ClientStatus = existing.ClientStatus
		a.ClientDescription = existing.ClientDescription
	}
	if err := structs.ValidateServerUpdate(existing, a); err != nil {
		return err
	}
	a.TaskStates = existing.TaskStates
	a.NetworkStatus = existing.NetworkStatus
	// The client's health verdict belongs to the deployment it was made
	// for (or, without one, to a migration). A plan that moves the alloc
	// into another deployment keeps its own status (the Canary flag it
	// sets); the client judges the new deployment afresh.
	if existing.DeploymentStatus != nil && a.DeploymentID == existing.DeploymentID {
		ds := *existing.DeploymentStatus
		if a.DeploymentStatus != nil {
			ds.Canary = a.DeploymentStatus.Canary
		}
		a.DeploymentStatus = &ds
	}
	return nil
}

// UpdateAllocsFromClient applies a client's status reports. Only the
// client-owned fields are taken (existing.ApplyClientUpdate), after
// checking each transition; one invalid transition rejects the whole
// batch. AllocModifyIndex is left alone so a client is not woken by its own
// report; ModifyIndex moves. Reports for allocs that were garbage collected
// are skipped.
func (tx *Txn) UpdateAllocsFromClient(allocs []*structs.Allocation) error {
	mtxn, index := tx.txn, tx.index
	for _, update := range allocs {
		if update == nil {
			continue
		}
		existing, err := allocByIDTxn(mtxn, nil, update.ID)
		if err != nil {
			return err
		}
		if existing == nil {
			continue
		}
		merged, err := existing.ApplyClientUpdate(update)
		if err != nil {
			return err
		}
		internClientUpdate(merged, update, existing)
		merged.ModifyIndex = index
		if update.ModifyTime != 0 {
			merged.ModifyTime = update.ModifyTime
		}
		if update.DeploymentStatus != nil {
			// The deployment watcher watches this to notice new health.
			merged.DeploymentStatus.ModifyIndex = index
		}
		if err := insertAlloc(mtxn, index, merged, existing, tx.jobs); err != nil {
			return err
		}
	}
	return setIndex(mtxn, TableAllocs, index)
}

// UpdateAllocsDesiredTransitions merges desired transitions (migrate off a
// draining node, forced reschedule) into allocs and creates the evals that
// act on them, in one write. Unknown alloc IDs are skipped. Clients and the
// scheduler need to see the change, so AllocModifyIndex moves.
//
// events (nil for none) records an event on each named node, in the same
// transaction: the drainer's batch of migrations and the node's record of
// it. An event for a node that no longer exists is skipped, so a node
// deleted between the drainer's read and the entry cannot make the entry
// fail.
func (tx *Txn) UpdateAllocsDesiredTransitions(allocs map[string]*structs.DesiredTransition, evals []*structs.Evaluation, events map[string]*structs.NodeEvent) error {
	txn, index := tx.txn, tx.index
	for _, id := range sortedKeys(events) {
		if events[id] == nil {
			continue
		}
		n, err := nodeByIDTxn(txn, nil, id)
		if err != nil {
			return err
		}
		if n == nil {
			continue
		}
		if err := updateNodeTxn(txn, index, id, events[id], func(*structs.Node) error { return nil }); err != nil {
			return err
		}
	}
	js := jobSet{}
	for _, id := range sortedKeys(allocs) {
		t := allocs[id]
		existing, err := allocByIDTxn(txn, nil, id)
		if err != nil {
			return err
		}
		if existing == nil || t == nil {
			continue
		}
		a := existing.Copy()
		a.DesiredTransition.Merge(t)
		if err := insertServerChange(txn, index, a, existing, js); err != nil {
			return err
		}
	}
	if err := setIndex(txn, TableAllocs, index); err != nil {
		return err
	}
	if err := upsertEvalsTxn(txn, index, evals, js); err != nil {
		return err
	}
	return setJobStatuses(txn, index, js, false)
}

// insertServerChange stores a, a server's change to the stored alloc
// existing, at index. The change is news to the alloc's client and to the
// scheduler, so AllocModifyIndex moves with ModifyIndex.
func insertServerChange(txn *memdb.Txn, index uint64, a, existing *structs.Allocation, js jobSet) error {
	a.ModifyIndex = index
	a.AllocModifyIndex = index
	return insertAlloc(txn, index, a, existing, js)
}

// insertAlloc stores a (whose previous version is existing, or nil) and
// keeps the job summary and the deployment counts in step.
func insertAlloc(txn *memdb.Txn, index uint64, a, existing *structs.Allocation, js jobSet) error {
	if err := updateSummaryWithAlloc(txn, index, a, existing); err != nil {
		return err
	}
	if err := updateDeploymentWithAlloc(txn, index, a, existing); err != nil {
		return err
	}
	if err := txn.Insert(TableAllocs, a); err != nil {
		return fmt.Errorf("state: inserting alloc %s: %w", a.ID, err)
	}
	js.add(a.Namespace, a.JobID)
	if a.TerminalStatus() {
		// A stopped alloc advertises nothing, from this very write on.
		if err := deleteServiceRegistrationsTxn(txn, index, "alloc_id", a.ID); err != nil {
			return err
		}
	}
	return nil
}

// AllocByID returns the alloc, or nil.
func (s *StateStore) AllocByID(ws memdb.WatchSet, id string) (*structs.Allocation, error) {
	return allocByIDTxn(s.readTxn(), ws, id)
}

func allocByIDTxn(txn *memdb.Txn, ws memdb.WatchSet, id string) (*structs.Allocation, error) {
	obj, err := firstByKey(txn, ws, func(a *structs.Allocation) bool { return a.ID == id }, TableAllocs, "id", id)
	if err != nil {
		return nil, fmt.Errorf("state: alloc lookup: %w", err)
	}
	return obj, nil
}

// AllocsByIDPrefix iterates over the allocs whose ID starts with prefix, in
// namespace (or every namespace if namespace is "" or "*").
func (s *StateStore) AllocsByIDPrefix(ws memdb.WatchSet, namespace, prefix string) (memdb.ResultIterator, error) {
	iter, err := getWatch(s.readTxn(), ws, TableAllocs, "id_prefix", prefix)
	if err != nil {
		return nil, err
	}
	return filterNamespace(iter, namespace, func(raw any) string { return raw.(*structs.Allocation).Namespace }), nil
}

// AllocsByNode returns every alloc on a node, terminal or not.
func (s *StateStore) AllocsByNode(ws memdb.WatchSet, node string) ([]*structs.Allocation, error) {
	txn := s.readTxn()
	live, err := allocsByNodeTerminalTxn(txn, ws, node, false)
	if err != nil {
		return nil, err
	}
	done, err := allocsByNodeTerminalTxn(txn, ws, node, true)
	if err != nil {
		return nil, err
	}
	return append(live, done...), nil
}

// AllocsByNodeTerminal returns the allocs on a node that are (or are not)
// terminal in the sense of Allocation.TerminalStatus.
func (s *StateStore) AllocsByNodeTerminal(ws memdb.WatchSet, node string, terminal bool) ([]*structs.Allocation, error) {
	return allocsByNodeTerminalTxn(s.readTxn(), ws, node, terminal)
}

func allocsByNodeTerminalTxn(txn *memdb.Txn, ws memdb.WatchSet, node string, terminal bool) ([]*structs.Allocation, error) {
	iter, err := getWatch(txn, ws, TableAllocs, "node", node, terminal)
	if err != nil {
		return nil, err
	}
	return collectAllocs(iter), nil
}

// AllocsByJob returns a job's allocs. Unless anyCreateIndex, only allocs
// made for the job's current incarnation are returned, so a job purged and
// registered again does not see the old job's allocs.
func (s *StateStore) AllocsByJob(ws memdb.WatchSet, namespace, jobID string, anyCreateIndex bool) ([]*structs.Allocation, error) {
	txn := s.readTxn()
	var job *structs.Job
	if !anyCreateIndex {
		var err error
		if job, err = jobByIDTxn(txn, ws, namespace, jobID); err != nil {
			return nil, err
		}
	}
	iter, err := getWatch(txn, ws, TableAllocs, "job", namespace, jobID)
	if err != nil {
		return nil, err
	}
	var out []*structs.Allocation
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		a := raw.(*structs.Allocation)
		if job != nil && a.Job != nil && a.Job.CreateIndex != job.CreateIndex {
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

// AllocsByEval returns the allocs an eval placed (or last updated in
// place): none if the eval is not stored.
//
// There is no index on an alloc's eval. An entry in a memdb index costs a
// server about 450 bytes per alloc, as much as the alloc's own fields,
// and this read is rare: an eval's page, and garbage collection (which
// groups a job's allocs by eval once, AllocsOfJobBy, rather than asking
// here per eval). An eval belongs to one job and so do all the allocs it
// places, so the read walks the job's allocs (about 0.5 ms for a job of
// 10,000, BenchmarkAllocsByEvalAndDeployment) and the watch set covers
// them all. Allocs by deployment have their own part of the job index
// (allocJobIndex): the deployment watcher reads them on every change, and
// when it walked the job's allocs, a deployment of a tenth of a large job
// paid for the whole job each time (a watcher pass 8-14 times slower,
// BenchmarkDeploymentWatcherLargeJob in nomad/deploymentwatcher/).
func (s *StateStore) AllocsByEval(ws memdb.WatchSet, evalID string) ([]*structs.Allocation, error) {
	txn := s.readTxn()
	ev, err := evalByIDTxn(txn, ws, evalID)
	if err != nil || ev == nil {
		return nil, err
	}
	iter, err := getWatch(txn, ws, TableAllocs, "job", ev.Namespace, ev.JobID)
	if err != nil {
		return nil, err
	}
	return collectAllocs(memdb.NewFilterIterator(iter, func(raw any) bool {
		return raw.(*structs.Allocation).EvalID != evalID
	})), nil
}

// AllocsByDeployment returns the allocs of a deployment.
//
// A deployment belongs to one job, and the allocs' job index is keyed by
// deployment within the job (allocJobIndex), so the read finds the
// deployment's job and walks only its allocs of that deployment. For a
// deployment that is not stored (garbage collected, or never written),
// it walks every alloc: no server reads one, since the watcher, the
// deployment endpoints and garbage collection all start from the stored
// deployment.
func (s *StateStore) AllocsByDeployment(ws memdb.WatchSet, deploymentID string) ([]*structs.Allocation, error) {
	txn := s.readTxn()
	// Not watched: the deployment's job never changes, and the allocs'
	// watch covers what the answer depends on (every alloc, for a
	// deployment not stored).
	d, err := deploymentByIDTxn(txn, nil, deploymentID)
	if err != nil {
		return nil, err
	}
	if d == nil {
		iter, err := getWatch(txn, ws, TableAllocs, "id")
		if err != nil {
			return nil, err
		}
		return collectAllocs(memdb.NewFilterIterator(iter, func(raw any) bool {
			return raw.(*structs.Allocation).DeploymentID != deploymentID
		})), nil
	}
	iter, err := getWatch(txn, ws, TableAllocs, "job", d.Namespace, d.JobID, deploymentID)
	if err != nil {
		return nil, err
	}
	return collectAllocs(iter), nil
}

// AllocsOfJobBy returns every alloc of a job (of any of its incarnations)
// grouped by key(alloc); allocs for which key returns "" are left out.
// Garbage collection uses it to find the allocs of many evals of one job
// in one read.
func (s *StateStore) AllocsOfJobBy(ws memdb.WatchSet, namespace, jobID string, key func(*structs.Allocation) string) (map[string][]*structs.Allocation, error) {
	iter, err := getWatch(s.readTxn(), ws, TableAllocs, "job", namespace, jobID)
	if err != nil {
		return nil, err
	}
	out := map[string][]*structs.Allocation{}
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		a := raw.(*structs.Allocation)
		if k := key(a); k != "" {
			out[k] = append(out[k], a)
		}
	}
	return out, nil
}

// Allocs iterates over every alloc.
func (s *StateStore) Allocs(ws memdb.WatchSet) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableAllocs, "id")
}

func collectAllocs(iter memdb.ResultIterator) []*structs.Allocation {
	return appendAll[*structs.Allocation](nil, iter)
}

// linkPreviousAllocTxn points a replaced alloc at its new replacement, so
// the chain can be followed both ways whatever the plan carried.
func linkPreviousAllocTxn(txn *memdb.Txn, index uint64, a *structs.Allocation) error {
	if a.PreviousAllocation == "" {
		return nil
	}
	prev, err := allocByIDTxn(txn, nil, a.PreviousAllocation)
	if err != nil || prev == nil || prev.NextAllocation == a.ID {
		return err
	}
	c := prev.Copy()
	c.NextAllocation = a.ID
	c.ModifyIndex = index
	return txn.Insert(TableAllocs, c)
}
