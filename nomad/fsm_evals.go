package nomad

import (
	"crypto/sha256"
	"fmt"

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

// deterministicID makes an ID inside an FSM apply from values every server
// sees identically (the entry's index and content), in UUID form. It is for
// the rare object the FSM must create itself; IDs normally arrive in the
// entry.
func deterministicID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	b := h.Sum(nil)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
