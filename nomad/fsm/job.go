package fsm

import (
	"fmt"
	"sort"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

func (f *FSM) applyJobRegister(buf []byte, index uint64) any {
	var req structs.JobRegisterRequest
	decode(buf, &req, structs.JobRegisterRequestType)
	st := f.State()
	if req.EnforceIndex {
		// Raft applies entries one at a time, so this check and the write
		// below are atomic with respect to every other registration.
		existing, err := st.JobByID(nil, req.Job.Namespace, req.Job.ID)
		if err != nil {
			return err
		}
		if err := CheckJobModifyIndex(existing, req.JobModifyIndex); err != nil {
			return err
		}
	}
	if req.Eval == nil {
		if err := st.Write(index, func(tx *state.Txn) error { return tx.UpsertJob(req.Job) }); err != nil {
			f.logger.Error("UpsertJob failed", "error", err)
			return err
		}
		f.jobUpserted(req.Job)
		return nil
	}
	// The job and its eval are one transaction, so no reader ever sees a
	// job change without the eval that schedules it. The store stamps the
	// eval with the stored JobModifyIndex, known only now.
	if err := st.Write(index, func(tx *state.Txn) error { return tx.UpsertJobWithEval(req.Job, req.Eval) }); err != nil {
		f.logger.Error("UpsertJobWithEval failed", "error", err)
		return err
	}
	f.jobUpserted(req.Job)
	if eval, err := st.EvalByID(nil, req.Eval.ID); err == nil && eval != nil {
		f.hooks.EvalsUpserted([]*structs.Evaluation{eval})
	}
	return nil
}

// jobUpserted hands the hooks the job as stored (with its indexes and
// status), not as it arrived in the entry.
func (f *FSM) jobUpserted(job *structs.Job) {
	if stored, err := f.State().JobByID(nil, nsOrDefault(job.Namespace), job.ID); err == nil && stored != nil {
		f.hooks.JobUpserted(stored)
	}
}

// applyJobDeregister stops a job, or deletes it when purging, and records
// the eval that stops its allocs, in one transaction: a reader never sees
// a stopped job whose allocs nothing will stop. Allocations are never
// deleted here (promise 2): the scheduler stops them and garbage
// collection removes them once their clients confirm.
func (f *FSM) applyJobDeregister(buf []byte, index uint64) any {
	var req structs.JobDeregisterRequest
	decode(buf, &req, structs.JobDeregisterRequestType)
	var evals []*structs.Evaluation
	if req.Eval != nil {
		evals = append(evals, req.Eval)
	}
	st := f.State()
	var stopped bool
	err := st.Write(index, func(txn *state.Txn) error {
		var err error
		d := state.JobDeregistration{Namespace: req.Namespace, ID: req.JobID, Purge: req.Purge, SubmitTime: req.SubmitTime}
		if stopped, err = txn.DeregisterJob(d); err != nil {
			return fmt.Errorf("deregistering job %s: %w", req.JobID, err)
		}
		return txn.UpsertEvals(evals)
	})
	if err != nil {
		return err
	}
	if stopped {
		f.hooks.JobStopped(nsOrDefault(req.Namespace), req.JobID)
	}
	f.notifyEvals(st, evals)
	return nil
}

// applyJobBatchDeregister stops or purges several jobs (garbage collection
// purges with it) and records the entry's evals, in one state transaction
// and in the order of the job keys, never of map iteration. A job whose
// options carry an ExpectedModifyIndex is checked again here and skipped
// if it changed since the leader chose it (see state.DeregisterJobs).
func (f *FSM) applyJobBatchDeregister(buf []byte, index uint64) any {
	var req structs.JobBatchDeregisterRequest
	decode(buf, &req, structs.JobBatchDeregisterRequestType)
	keys := make([]structs.NamespacedID, 0, len(req.Jobs))
	for id := range req.Jobs {
		keys = append(keys, id)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Namespace != keys[j].Namespace {
			return keys[i].Namespace < keys[j].Namespace
		}
		return keys[i].ID < keys[j].ID
	})
	jobs := make([]state.JobDeregistration, 0, len(keys))
	for _, id := range keys {
		d := state.JobDeregistration{Namespace: id.Namespace, ID: id.ID}
		if opts := req.Jobs[id]; opts != nil {
			d.Purge, d.ExpectedModifyIndex = opts.Purge, opts.ExpectedModifyIndex
		}
		jobs = append(jobs, d)
	}
	st := f.State()
	var done []structs.NamespacedID
	err := st.Write(index, func(tx *state.Txn) (err error) {
		done, err = tx.DeregisterJobs(jobs, req.Evals)
		return err
	})
	if err != nil {
		f.logger.Error("DeregisterJobs failed", "error", err)
		return err
	}
	for _, id := range done {
		f.hooks.JobStopped(id.Namespace, id.ID)
	}
	f.notifyEvals(st, req.Evals)
	return nil
}

func (f *FSM) applyJobStability(buf []byte, index uint64) any {
	var req structs.JobStabilityRequest
	decode(buf, &req, structs.JobStabilityRequestType)
	return errOrNil(f.State().Write(index, func(tx *state.Txn) error {
		return tx.UpdateJobStability(req.Namespace, req.JobID, req.JobVersion, req.Stable)
	}))
}

// errOrNil keeps a typed-nil error from becoming a non-nil interface in a
// raft response.
func errOrNil(err error) any {
	if err == nil {
		return nil
	}
	return err
}

// CheckJobModifyIndex is the check-and-set test of a registration:
// existing (nil if the job does not exist) must have JobModifyIndex want,
// with 0 meaning the job must not exist. The FSM makes the binding check;
// the endpoint makes it early, to refuse without a raft write.
func CheckJobModifyIndex(existing *structs.Job, want uint64) error {
	var current uint64
	if existing != nil {
		current = existing.JobModifyIndex
	}
	switch {
	case current == want:
		return nil
	case existing == nil:
		return fmt.Errorf("%w %d: job not found", structs.ErrIndexConflict, want)
	}
	return fmt.Errorf("%w %d: job exists with conflicting job modify index: %d", structs.ErrIndexConflict, want, current)
}
