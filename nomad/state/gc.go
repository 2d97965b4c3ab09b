package state

import (
	"fmt"
	"sort"
	"time"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// Garbage collection: the rules for what may be deleted, shared by the
// leader's read (which picks candidates) and the FSM's apply (which checks
// them again, because the state may have moved between the two), and the
// conditional deletes the apply uses.

// AllocIsGCable reports whether garbage collection may delete alloc a.
// job is the stored job of the alloc's namespace and ID, nil if there is
// none. It is a pure function of the records (no clock), so the FSM can
// apply it. Age thresholds are the caller's business.
//
//   - Only an alloc its client is done with (complete, failed or lost) is
//     ever deleted (promise 2).
//   - If its job is gone, stopped, or is a later incarnation (purged and
//     registered again), nothing will be scheduled against it: delete it.
//   - A finished batch or sysbatch alloc holds its slot: the scheduler does
//     not run finished work again because the alloc exists. So while its
//     job is not dead the alloc stays.
//   - A failed alloc that its group's reschedule policy will still replace
//     carries the reschedule history its replacement needs (attempts,
//     delay series): it stays until it is replaced (NextAllocation) or the
//     job is stopped or gone.
func AllocIsGCable(a *structs.Allocation, job *structs.Job) bool {
	if a == nil || !a.ClientTerminalStatus() {
		return false
	}
	if job == nil || job.Stop || otherIncarnation(a, job) {
		return true
	}
	if (job.Type == structs.JobTypeBatch || job.Type == structs.JobTypeSysBatch) && job.Status != structs.JobStatusDead {
		return false
	}
	return !AllocReschedulable(a, job)
}

// otherIncarnation reports whether a was made for an earlier job of the
// same ID, one that was purged before job was registered.
func otherIncarnation(a *structs.Allocation, job *structs.Job) bool {
	return a.Job != nil && a.Job.CreateIndex != 0 && a.Job.CreateIndex != job.CreateIndex
}

// AllocReschedulable reports whether a is a failed alloc the scheduler may
// still replace under the reschedule policy of its group in job: the
// servers have not stopped it, it has no replacement yet, and the policy
// is unlimited or has attempts left in the interval before the failure.
// This mirrors the scheduler's own decision (scheduler/reconciler), minus
// the timing of the delay, which does not matter here: an alloc waiting
// for a delayed reschedule is as reschedulable as one due now.
func AllocReschedulable(a *structs.Allocation, job *structs.Job) bool {
	if a.ClientStatus != structs.AllocClientStatusFailed || a.ServerTerminalStatus() || a.NextAllocation != "" {
		return false
	}
	if a.DesiredTransition.ShouldForceReschedule() {
		return true
	}
	tg := job.LookupTaskGroup(a.TaskGroup)
	if tg == nil {
		return false
	}
	p := tg.ReschedulePolicy
	if !p.Enabled() {
		return false
	}
	if p.Unlimited {
		return true
	}
	return rescheduleAttemptsBefore(a, p.Interval) < p.Attempts
}

// rescheduleAttemptsBefore counts the reschedules in a's history within
// interval before a failed, as the scheduler counts them. When the failure
// time is unknown no attempt is counted, which keeps the alloc: erring
// toward keeping history is the safe side.
func rescheduleAttemptsBefore(a *structs.Allocation, interval time.Duration) int {
	if a.RescheduleTracker == nil {
		return 0
	}
	var failed int64
	for _, ts := range a.TaskStates {
		if ts != nil && !ts.FinishedAt.IsZero() && ts.FinishedAt.UnixNano() > failed {
			failed = ts.FinishedAt.UnixNano()
		}
	}
	if failed == 0 {
		failed = a.ModifyTime
	}
	if failed == 0 {
		return 0
	}
	from := failed - interval.Nanoseconds()
	n := 0
	for _, e := range a.RescheduleTracker.Events {
		if e.RescheduleTime > from {
			n++
		}
	}
	return n
}

// JobDeregistration is one job of DeregisterJobs.
type JobDeregistration struct {
	Namespace string
	ID        string
	// Purge deletes the job; otherwise it is marked stopped.
	Purge bool
	// ExpectedModifyIndex, when not zero, makes the change conditional: the
	// job is left alone unless its ModifyIndex is still this and it is
	// still garbage (see jobStillGarbage). Garbage collection sets it.
	ExpectedModifyIndex uint64
	// SubmitTime, when not zero, is recorded on a job being stopped: the
	// time the user asked for it, chosen by the leader.
	SubmitTime int64
}

// DeregisterJobs stops or purges several jobs and records evals, all in one
// transaction, in a fixed order (by namespace, then ID, whatever order the
// caller passes). A job that does not exist is skipped, and so is one whose
// expectation no longer holds: garbage collection decided on a read that
// raft may have overtaken, and a job registered again in between must
// survive. It returns the jobs actually stopped or purged.
func (tx *Txn) DeregisterJobs(jobs []JobDeregistration, evals []*structs.Evaluation) ([]structs.NamespacedID, error) {
	sorted := append([]JobDeregistration(nil), jobs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Namespace != sorted[j].Namespace {
			return sorted[i].Namespace < sorted[j].Namespace
		}
		return sorted[i].ID < sorted[j].ID
	})
	var done []structs.NamespacedID
	for _, d := range sorted {
		ok, err := tx.DeregisterJob(d)
		if err != nil {
			return nil, err
		}
		if ok {
			done = append(done, structs.NamespacedID{Namespace: nsOrDefault(d.Namespace), ID: d.ID})
		}
	}
	if err := tx.UpsertEvals(evals); err != nil {
		return nil, err
	}
	return done, nil
}

// DeregisterJob stops or purges one job, for an entry that also writes the
// eval that stops the job's allocs. It reports whether the job was there
// to stop or purge (a job already stopped counts: stopping it again
// changes nothing but is not an error); a job that is gone, or whose
// expectation no longer holds, is skipped as in DeregisterJobs.
func (tx *Txn) DeregisterJob(d JobDeregistration) (bool, error) {
	mtxn, index := tx.txn, tx.index
	job, err := jobByIDTxn(mtxn, nil, nsOrDefault(d.Namespace), d.ID)
	if err != nil || job == nil {
		return false, err
	}
	if d.ExpectedModifyIndex != 0 {
		ok, err := jobStillGarbage(mtxn, job, d.ExpectedModifyIndex)
		if err != nil || !ok {
			return false, err
		}
	}
	switch {
	case d.Purge:
		if err := deleteJobTxn(mtxn, index, job); err != nil {
			return false, fmt.Errorf("deleting job %s: %w", job.ID, err)
		}
	case !job.Stop:
		stopped := job.Copy()
		stopped.Stop = true
		if d.SubmitTime != 0 {
			stopped.SubmitTime = d.SubmitTime
		}
		if err := upsertJobTxn(mtxn, index, stopped); err != nil {
			return false, fmt.Errorf("stopping job %s: %w", job.ID, err)
		}
	}
	return true, nil
}

// nsOrDefault is the namespace a request means: none means the default.
func nsOrDefault(ns string) string {
	if ns == "" {
		return structs.DefaultNamespace
	}
	return ns
}

// jobStillGarbage re-checks, inside the write, what garbage collection saw
// when it chose job: it has not been written since (ModifyIndex moves on
// every registration and status change), it may be collected (dead, and
// stopped or a finished batch job), and none of its allocs is still held by
// a client nor any of its evals unfinished.
func jobStillGarbage(txn *memdb.Txn, job *structs.Job, expected uint64) (bool, error) {
	if job.ModifyIndex != expected || !JobIsGCable(job) {
		return false, nil
	}
	allocs, err := txn.Get(TableAllocs, "job", job.Namespace, job.ID)
	if err != nil {
		return false, fmt.Errorf("state: allocs of job %s: %w", job.ID, err)
	}
	for raw := allocs.Next(); raw != nil; raw = allocs.Next() {
		if !raw.(*structs.Allocation).ClientTerminalStatus() {
			return false, nil
		}
	}
	evals, err := txn.Get(TableEvals, "job_prefix", job.Namespace, job.ID, "")
	if err != nil {
		return false, fmt.Errorf("state: evals of job %s: %w", job.ID, err)
	}
	for raw := evals.Next(); raw != nil; raw = evals.Next() {
		if e := raw.(*structs.Evaluation); e.JobID == job.ID && !e.TerminalStatus() {
			return false, nil
		}
	}
	return true, nil
}

// DeleteNodesIfUnchanged removes the nodes garbage collection chose, in
// the order given, in one transaction. A node with an entry in expected is
// removed only if it still exists, its ModifyIndex is still the expected
// one, it is still down and every alloc on it is client-terminal; otherwise
// it is skipped, not an error: a down node that re-registered and got work
// meanwhile must survive (promise 2). A node without an entry is removed
// unconditionally and must exist, as with DeleteNode. It returns the nodes
// removed.
func (tx *Txn) DeleteNodesIfUnchanged(nodeIDs []string, expected map[string]uint64) ([]string, error) {
	txn := tx.txn
	var deleted []string
	for _, id := range nodeIDs {
		node, err := nodeByIDTxn(txn, nil, id)
		if err != nil {
			return nil, err
		}
		want, conditional := expected[id]
		if node == nil {
			if conditional {
				continue
			}
			return nil, fmt.Errorf("node %s: %w", structs.ShortID(id), structs.ErrNotFound)
		}
		if conditional {
			ok, err := nodeStillGarbage(txn, node, want)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		if err := deleteNodeTxn(txn, node); err != nil {
			return nil, err
		}
		deleted = append(deleted, id)
	}
	if len(deleted) == 0 {
		return nil, nil
	}
	if err := setIndex(txn, TableNodes, tx.index); err != nil {
		return nil, err
	}
	return deleted, nil
}

func nodeStillGarbage(txn *memdb.Txn, node *structs.Node, expected uint64) (bool, error) {
	if node.ModifyIndex != expected || node.Status != structs.NodeStatusDown {
		return false, nil
	}
	for _, terminal := range []bool{false, true} {
		allocs, err := allocsByNodeTerminalTxn(txn, nil, node.ID, terminal)
		if err != nil {
			return false, err
		}
		for _, a := range allocs {
			if !a.ClientTerminalStatus() {
				return false, nil
			}
		}
	}
	return true, nil
}

// deleteNodeTxn removes a node and its row of deleted-alloc indexes.
func deleteNodeTxn(txn *memdb.Txn, node *structs.Node) error {
	if err := txn.Delete(TableNodes, node); err != nil {
		return fmt.Errorf("state: deleting node %s: %w", node.ID, err)
	}
	return deleteNodeAllocsDeletedIndex(txn, node.ID)
}

// nodeAllocsDeletedPrefix starts the key of an `index` table row that
// holds, per node, the raft index at which garbage collection last deleted
// one of the node's allocs. A client's assignment (Node.GetClientAllocs)
// answers with the highest AllocModifyIndex of the node's allocs; without
// this row, deleting the alloc that had the highest one would make the
// answer's index go backwards, which clients rightly refuse, and a blocked
// query would not see the deletion as news.
const nodeAllocsDeletedPrefix = "node_allocs_deleted:"

func nodeAllocsDeletedKey(nodeID string) string { return nodeAllocsDeletedPrefix + nodeID }

// NodeAllocsDeletedIndex returns the raft index at which an alloc of the
// node was last deleted (0 if never, or not since the node was created),
// and adds the row to ws so that a blocking query wakes on the next such
// deletion.
func (s *StateStore) NodeAllocsDeletedIndex(ws memdb.WatchSet, nodeID string) (uint64, error) {
	ch, raw, err := s.readTxn().FirstWatch(TableIndex, "id", nodeAllocsDeletedKey(nodeID))
	if err != nil {
		return 0, fmt.Errorf("state: reading deleted-allocs index of node %s: %w", nodeID, err)
	}
	ws.Add(ch)
	if raw == nil {
		return 0, nil
	}
	return raw.(*IndexEntry).Value, nil
}

// setNodeAllocsDeletedIndexes records index as the deletion index of each
// node in nodes that exists. A node that is gone has no client to tell,
// and a row for it would never be removed.
func setNodeAllocsDeletedIndexes(txn *memdb.Txn, index uint64, nodes map[string]struct{}) error {
	for _, id := range sortedKeys(nodes) {
		node, err := nodeByIDTxn(txn, nil, id)
		if err != nil {
			return err
		}
		if node == nil {
			continue
		}
		if err := setIndex(txn, nodeAllocsDeletedKey(id), index); err != nil {
			return err
		}
	}
	return nil
}

func deleteNodeAllocsDeletedIndex(txn *memdb.Txn, nodeID string) error {
	if _, err := deleteByID(txn, TableIndex, nodeAllocsDeletedKey(nodeID)); err != nil {
		return fmt.Errorf("state: deleting deleted-allocs index of node %s: %w", nodeID, err)
	}
	return nil
}
