package fsm

import (
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

func (f *FSM) applyEvalUpdate(buf []byte, index uint64) any {
	var req structs.EvalUpdateRequest
	decode(buf, &req, structs.EvalUpdateRequestType)
	st := f.State()
	if err := st.Write(index, func(tx *state.Txn) error { return tx.UpsertEvals(req.Evals) }); err != nil {
		f.logger.Error("UpsertEvals failed", "error", err)
		return err
	}
	f.notifyEvals(st, req.Evals)
	return nil
}

func (f *FSM) applyEvalDelete(buf []byte, index uint64) any {
	var req structs.EvalDeleteRequest
	decode(buf, &req, structs.EvalDeleteRequestType)
	if req.KeepEvalsWithAllocs {
		return errOrNil(f.State().Write(index, func(tx *state.Txn) error { return tx.DeleteEvalsOnceEmpty(req.Evals, req.Allocs) }))
	}
	return errOrNil(f.State().Write(index, func(tx *state.Txn) error { return tx.DeleteEvals(req.Evals, req.Allocs) }))
}

func (f *FSM) applyDeploymentStatusUpdate(buf []byte, index uint64) any {
	var req structs.DeploymentStatusUpdateRequest
	decode(buf, &req, structs.DeploymentStatusUpdateRequestType)
	st := f.State()
	if err := st.Write(index, func(tx *state.Txn) error { return tx.UpdateDeploymentStatus(&req) }); err != nil {
		return err
	}
	if req.Eval != nil {
		f.notifyEvals(st, []*structs.Evaluation{req.Eval})
	}
	return nil
}

func (f *FSM) applyDeploymentDelete(buf []byte, index uint64) any {
	var req structs.DeploymentDeleteRequest
	decode(buf, &req, structs.DeploymentDeleteRequestType)
	if len(req.Deployments) == 0 {
		return nil // nothing to delete: open no transaction
	}
	return errOrNil(f.State().Write(index, func(tx *state.Txn) error { return tx.DeleteDeployment(req.Deployments) }))
}

func (f *FSM) applySchedulerConfig(buf []byte, index uint64) any {
	var req structs.SchedulerSetConfigRequest
	decode(buf, &req, structs.SchedulerConfigRequestType)
	st := f.State()
	if req.CAS {
		var ok bool
		err := st.Write(index, func(tx *state.Txn) (err error) {
			ok, err = tx.SchedulerCASConfig(req.Config.ModifyIndex, &req.Config)
			return err
		})
		if err != nil {
			return err
		}
		return ok
	}
	return errOrNil(st.Write(index, func(tx *state.Txn) error { return tx.SchedulerSetConfig(&req.Config) }))
}

func (f *FSM) applyGenericWrite(buf []byte, index uint64) any {
	var req structs.GenericWriteRequest
	decode(buf, &req, structs.GenericWriteRequestType)
	return errOrNil(f.State().Write(index, func(tx *state.Txn) error { return tx.KVSet(req.Key, req.Value) }))
}
