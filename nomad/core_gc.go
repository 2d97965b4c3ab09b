package nomad

import (
	"time"

	"github.com/drover-sched/drover/structs"
)

// gcThresholds says how old a terminal object must be to be collected.
// force collects every terminal object at once.
type gcThresholds struct {
	force bool
	now   time.Time
	eval  time.Duration
	job   time.Duration
	node  time.Duration
}

func (g gcThresholds) old(modifyTime int64, threshold time.Duration) bool {
	return g.force || g.now.Sub(time.Unix(0, modifyTime)) >= threshold
}

// allocDone reports whether an alloc is finished on both sides: the servers
// want it stopped (or it ran to completion) and its client has confirmed a
// terminal status. Only such an alloc may be deleted (promise 2).
func allocDone(a *structs.Allocation) bool {
	return a.ClientTerminalStatus()
}

// collectGarbage deletes terminal evals and their allocs, purges stopped
// jobs with nothing left, and removes down nodes with nothing left, each as
// one raft entry. It returns the last index written.
func (s *Server) collectGarbage(g gcThresholds) (uint64, error) {
	st := s.State()
	var last uint64

	// Evals and their allocs.
	var evalIDs, allocIDs []string
	it, err := st.Evals(nil)
	if err != nil {
		return 0, err
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		ev := raw.(*structs.Evaluation)
		if !ev.TerminalStatus() || !g.old(ev.ModifyTime, g.eval) {
			continue
		}
		allocs, err := st.AllocsByEval(nil, ev.ID)
		if err != nil {
			return 0, err
		}
		collectable := true
		var ids []string
		for _, a := range allocs {
			if !allocDone(a) || !g.old(a.ModifyTime, g.eval) {
				collectable = false
				break
			}
			ids = append(ids, a.ID)
		}
		if collectable {
			evalIDs = append(evalIDs, ev.ID)
			allocIDs = append(allocIDs, ids...)
		}
	}
	if len(evalIDs) > 0 {
		idx, _, err := s.raftApply(structs.EvalDeleteRequestType, &structs.EvalDeleteRequest{Evals: evalIDs, Allocs: allocIDs})
		if err != nil {
			return 0, err
		}
		last = idx
	}

	// Stopped or finished jobs with no live allocs or pending evals.
	jobs := map[structs.NamespacedID]*structs.JobDeregisterOptions{}
	jit, err := st.Jobs(nil)
	if err != nil {
		return 0, err
	}
	for raw := jit.Next(); raw != nil; raw = jit.Next() {
		job := raw.(*structs.Job)
		if job.Status != structs.JobStatusDead || job.IsPeriodic() || job.IsParameterized() || !g.old(job.SubmitTime, g.job) {
			continue
		}
		allocs, err := st.AllocsByJob(nil, job.Namespace, job.ID, true)
		if err != nil {
			return 0, err
		}
		live := false
		for _, a := range allocs {
			if !allocDone(a) {
				live = true
				break
			}
		}
		evals, err := st.EvalsByJob(nil, job.Namespace, job.ID)
		if err != nil {
			return 0, err
		}
		for _, e := range evals {
			if !e.TerminalStatus() {
				live = true
			}
		}
		if !live {
			jobs[job.NamespacedID()] = &structs.JobDeregisterOptions{Purge: true}
		}
	}
	if len(jobs) > 0 {
		idx, _, err := s.raftApply(structs.JobBatchDeregisterRequestType, &structs.JobBatchDeregisterRequest{Jobs: jobs})
		if err != nil {
			return 0, err
		}
		last = idx
	}

	// Down nodes with nothing left running.
	var nodeIDs []string
	nit, err := st.Nodes(nil)
	if err != nil {
		return 0, err
	}
	for raw := nit.Next(); raw != nil; raw = nit.Next() {
		node := raw.(*structs.Node)
		if node.Status != structs.NodeStatusDown || !g.old(node.StatusUpdatedAt*int64(time.Second), g.node) {
			continue
		}
		allocs, err := st.AllocsByNode(nil, node.ID)
		if err != nil {
			return 0, err
		}
		live := false
		for _, a := range allocs {
			if !allocDone(a) {
				live = true
			}
		}
		if !live {
			nodeIDs = append(nodeIDs, node.ID)
		}
	}
	if len(nodeIDs) > 0 {
		idx, _, err := s.raftApply(structs.NodeBatchDeregisterRequestType, &structs.NodeBatchDeregisterRequest{NodeIDs: nodeIDs})
		if err != nil {
			return 0, err
		}
		last = idx
	}
	return last, nil
}
