package nomad

import (
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// jobAllocsBy finds, during one garbage collection pass, the allocs of
// many evals of the same jobs. The store has no index on an alloc's eval
// (state.StateStore.AllocsByEval says why),
// so each would be a read of its job's allocs; a job with many old evals
// would be read once per eval. Instead each job's allocs are read once and
// grouped by key.
type jobAllocsBy struct {
	st    *state.StateStore
	key   func(*structs.Allocation) string
	byJob map[structs.NamespacedID]map[string][]*structs.Allocation
}

func newJobAllocsBy(st *state.StateStore, key func(*structs.Allocation) string) *jobAllocsBy {
	return &jobAllocsBy{st: st, key: key, byJob: map[structs.NamespacedID]map[string][]*structs.Allocation{}}
}

// of returns the allocs of job namespace/jobID whose key is k.
func (j *jobAllocsBy) of(namespace, jobID, k string) ([]*structs.Allocation, error) {
	id := structs.NamespacedID{Namespace: namespace, ID: jobID}
	groups, ok := j.byJob[id]
	if !ok {
		var err error
		if groups, err = j.st.AllocsOfJobBy(nil, namespace, jobID, j.key); err != nil {
			return nil, err
		}
		j.byJob[id] = groups
	}
	return groups[k], nil
}
