package fsm

import (
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// notifyEvals hands the leader hooks the stored versions of evals an entry
// wrote: those carry the create and modify indexes the broker orders by,
// which the request's copies lack.
func (f *FSM) notifyEvals(st *state.StateStore, evals []*structs.Evaluation) {
	if len(evals) == 0 {
		return
	}
	stored := make([]*structs.Evaluation, 0, len(evals))
	for _, e := range evals {
		if s, err := st.EvalByID(nil, e.ID); err == nil && s != nil {
			stored = append(stored, s)
		}
	}
	f.hooks.EvalsUpserted(stored)
}
