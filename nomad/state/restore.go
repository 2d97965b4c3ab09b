package state

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// StateRestore loads a raft snapshot into a store in one write
// transaction. Objects are inserted exactly as persisted (indexes and all);
// nothing is derived or recomputed, so the restored store equals the one
// that was saved. Nothing is visible to readers until Commit.
//
// The FSM restores into a fresh store and swaps it in:
//
//	fresh, _ := state.NewStateStore(cfg)
//	r, _ := fresh.Restore()
//	defer r.Abort()
//	... r.JobRestore(job) for every persisted job, and so on ...
//	r.Commit()
//	old.Abandon() // wakes blocking queries on the old store
type StateRestore struct {
	txn *memdb.Txn
}

// Restore starts a restore. Only one may be in progress at a time, and no
// other write can happen until it is committed or aborted.
func (s *StateStore) Restore() (*StateRestore, error) {
	return &StateRestore{txn: s.db.Txn(true)}, nil
}

// Commit makes the restored objects visible.
func (r *StateRestore) Commit() error {
	r.txn.Commit()
	return nil
}

// Abort discards the restore. It is a no-op after Commit.
func (r *StateRestore) Abort() { r.txn.Abort() }

func (r *StateRestore) insert(table string, obj any) error {
	if err := r.txn.Insert(table, obj); err != nil {
		return fmt.Errorf("state: restoring into %s: %w", table, err)
	}
	return nil
}

// JobRestore restores a job.
func (r *StateRestore) JobRestore(job *structs.Job) error { return r.insert(TableJobs, job) }

// JobVersionRestore restores one version of a job.
func (r *StateRestore) JobVersionRestore(job *structs.Job) error {
	return r.insert(TableJobVersion, job)
}

// JobSummaryRestore restores a job summary.
func (r *StateRestore) JobSummaryRestore(s *structs.JobSummary) error {
	return r.insert(TableJobSummary, s)
}

// NodeRestore restores a node.
// n is the restore's own (decoded from the snapshot): its strings are
// shared as a registration's would be.
func (r *StateRestore) NodeRestore(n *structs.Node) error {
	shareNodeRegistration(n, nil)
	return r.insert(TableNodes, n)
}

// AllocRestore restores an allocation.
// a is the restore's own (decoded from the snapshot): it is made as
// compact as an alloc the store wrote itself.
func (r *StateRestore) AllocRestore(a *structs.Allocation) error {
	internAllocFields(a)
	a.AllocatedResources = shareAllocatedResources(a.AllocatedResources)
	a.Metrics = compactMetric(a.Metrics)
	a.TaskStates = internTaskStates(a.TaskStates)
	return r.insert(TableAllocs, a)
}

// EvalRestore restores an evaluation.
func (r *StateRestore) EvalRestore(e *structs.Evaluation) error { return r.insert(TableEvals, e) }

// DeploymentRestore restores a deployment.
func (r *StateRestore) DeploymentRestore(d *structs.Deployment) error {
	return r.insert(TableDeployments, d)
}

// IndexRestore restores a row of the index table.
func (r *StateRestore) IndexRestore(e *IndexEntry) error { return r.insert(TableIndex, e) }

// SchedulerConfigRestore restores the scheduler configuration.
func (r *StateRestore) SchedulerConfigRestore(c *structs.SchedulerConfiguration) error {
	return r.insert(TableSchedulerConfig, c)
}

// KVRestore restores a key of the generic key/value table.
func (r *StateRestore) KVRestore(e *KVEntry) error { return r.insert(TableKV, e) }

// ACLPolicyRestore restores an ACL policy.
func (r *StateRestore) ACLPolicyRestore(p *structs.ACLPolicy) error {
	return r.insert(TableACLPolicies, p)
}

// ACLTokenRestore restores an ACL token (as stored: hashed secret only).
func (r *StateRestore) ACLTokenRestore(t *structs.ACLToken) error {
	return r.insert(TableACLTokens, t)
}

// ServerSecretRestore restores the cluster's server secret.
func (r *StateRestore) ServerSecretRestore(sec *structs.ServerSecret) error {
	return r.insert(TableServerSecret, sec)
}
