package fsm

import (
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// applyJobScale applies a scaling request: the job's new version, the
// evaluation that schedules it and the scaling event, in one state
// transaction, or nothing if the request no longer holds against the
// state it meets (the job or group is gone, the job changed under a
// conditional request, a deployment started). Every value it writes came
// in the entry, so every server applies it the same way.
func (f *FSM) applyJobScale(buf []byte, index uint64) any {
	var req structs.JobScaleApplyRequest
	decode(buf, &req, structs.JobScaleRequestType)
	st := f.State()
	sc := state.JobScale{
		Namespace: nsOrDefault(req.Namespace), JobID: req.JobID, Group: req.Group, Count: req.Count,
		JobModifyIndex: req.JobModifyIndex, SubmitTime: req.SubmitTime, Eval: req.Eval, Event: req.Event,
	}
	if err := st.Write(index, func(txn *state.Txn) error { return txn.ScaleJob(sc) }); err != nil {
		return err
	}
	if req.Count == nil {
		return nil
	}
	f.jobUpserted(&structs.Job{Namespace: sc.Namespace, ID: req.JobID})
	if req.Eval != nil {
		f.notifyEvals(st, []*structs.Evaluation{req.Eval})
	}
	return nil
}
