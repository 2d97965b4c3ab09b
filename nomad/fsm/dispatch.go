package fsm

import (
	"fmt"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// DispatchDuplicate is, besides nil and an error, the third answer a
// dispatch entry's apply gives (as the raft future's Response): the entry
// stored nothing because a live child already holds its idempotency token,
// and the endpoint answers with that child.
type DispatchDuplicate struct {
	Child *structs.Job
}

// applyJobDispatch stores a dispatched child and its evaluation in one
// state transaction, the way a registration with an eval is stored (the
// child's summary, status and the parent's Children counts move with it).
// It first checks, against the state the entry meets, what the leader
// checked before proposing it: the parent is still a parameterized job
// that is not stopped, and no live child holds the same idempotency
// token. Raft applies entries one at a time and only the FSM writes the
// state, so this check and the write are atomic with respect to every
// other entry: two racing dispatches with one token store one child.
// Every value written came in the entry (promise 5).
func (f *FSM) applyJobDispatch(buf []byte, index uint64) any {
	var req structs.JobDispatchApplyRequest
	decode(buf, &req, structs.JobDispatchRequestType)
	if req.Job == nil || req.Eval == nil {
		return fmt.Errorf("%w: a dispatch entry needs the child job and its evaluation", structs.ErrBadRequest)
	}
	st := f.State()
	child := req.Job
	ns := nsOrDefault(child.Namespace)
	parent, err := st.JobByID(nil, ns, child.ParentID)
	if err != nil {
		return err
	}
	if err := CheckDispatchParent(parent, child.ParentID); err != nil {
		return err
	}
	if taken, err := st.JobByID(nil, ns, child.ID); err != nil {
		return err
	} else if taken != nil {
		return fmt.Errorf("dispatched child %q already exists; dispatch again for a new ID", child.ID)
	}
	if tok := child.DispatchIdempotencyToken; tok != "" {
		existing, err := LiveDispatchedChild(st, ns, child.ParentID, tok)
		if err != nil {
			return err
		}
		if existing != nil {
			return &DispatchDuplicate{Child: existing}
		}
	}
	if err := st.Write(index, func(tx *state.Txn) error { return tx.UpsertJobWithEval(child, req.Eval) }); err != nil {
		f.logger.Error("UpsertJobWithEval of dispatched child failed", "error", err)
		return err
	}
	f.jobUpserted(child)
	f.notifyEvals(st, []*structs.Evaluation{req.Eval})
	return nil
}

// CheckDispatchParent says why parent (nil if missing) cannot be
// dispatched, or nil if it can.
func CheckDispatchParent(parent *structs.Job, jobID string) error {
	switch {
	case parent == nil:
		return fmt.Errorf("job %q: %w", jobID, structs.ErrNotFound)
	case parent.Dispatched:
		return errBadRequest("job %q is itself a dispatched child (of %q); dispatch its parent instead", parent.ID, parent.ParentID)
	case !parent.IsParameterized():
		return errBadRequest("job %q is not parameterized; only a job with a parameterized block can be dispatched", parent.ID)
	case parent.Stopped():
		return errBadRequest("job %q is stopped; run it again before dispatching it", parent.ID)
	}
	return nil
}

// LiveDispatchedChild returns the child of parentID dispatched with token
// that is neither stopped nor dead, or nil. Dead children do not count: a
// token may be used again once its child has finished, as in Nomad.
func LiveDispatchedChild(st *state.StateStore, namespace, parentID, token string) (*structs.Job, error) {
	it, err := st.JobsByIDPrefix(nil, namespace, parentID+structs.DispatchLaunchSuffix)
	if err != nil {
		return nil, err
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		c := raw.(*structs.Job)
		if c.IsDispatchedChildOf(parentID) && c.DispatchIdempotencyToken == token &&
			!c.Stopped() && c.Status != structs.JobStatusDead {
			return c, nil
		}
	}
	return nil, nil
}
