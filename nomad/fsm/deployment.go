package fsm

import (
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// applyDeploymentPromote promotes canaries and stores the eval that places
// the rest, in one write.
func (f *FSM) applyDeploymentPromote(buf []byte, index uint64) any {
	var req structs.DeploymentPromoteRequest
	decode(buf, &req, structs.DeploymentPromoteRequestType)
	st := f.State()
	if err := st.Write(index, func(tx *state.Txn) error { return tx.UpdateDeploymentPromotion(&req) }); err != nil {
		return err
	}
	if req.Eval != nil {
		f.notifyEvals(st, []*structs.Evaluation{req.Eval})
	}
	return nil
}

// applyDeploymentAllocHealth records health verdicts with the status
// change, revert job and eval they bring, in one write.
func (f *FSM) applyDeploymentAllocHealth(buf []byte, index uint64) any {
	var req structs.ApplyDeploymentAllocHealthRequest
	decode(buf, &req, structs.DeploymentAllocHealthRequestType)
	st := f.State()
	if err := st.Write(index, func(tx *state.Txn) error { return tx.UpdateDeploymentAllocHealth(&req) }); err != nil {
		return err
	}
	if req.Job != nil {
		if job, err := st.JobByID(nil, nsOrDefault(req.Job.Namespace), req.Job.ID); err == nil && job != nil {
			f.hooks.JobUpserted(job)
		}
	}
	if req.Eval != nil {
		f.notifyEvals(st, []*structs.Evaluation{req.Eval})
	}
	return nil
}
