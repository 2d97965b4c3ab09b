package nomad

import (
	"time"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// gcDeps is what garbage collection needs from the server: the state it
// decides on and the raft log it writes deletions to.
type gcDeps interface {
	// State returns the current state store.
	State() *state.StateStore
	// raftApply commits one entry through raft and returns its index and
	// the FSM's response; an error the FSM returned is the error.
	raftApply(t structs.MessageType, msg any) (uint64, any, error)
}

// coreGC collects terminal objects (see collect).
type coreGC struct{ deps gcDeps }

// collectGarbage runs one collection on this server.
func (s *Server) collectGarbage(g gcThresholds) (uint64, error) {
	return coreGC{deps: s}.collect(g)
}

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

// allocDone reports whether an alloc's client status is terminal
// (complete, failed, or lost: the servers mark an alloc lost only when its
// node is gone). The servers' desired status is not consulted: an alloc the
// servers stopped is not done until its client confirms, and one its client
// finished is done whatever the servers still wanted of it (a batch alloc
// that ran to completion; a failed one, which of a job or node being
// collected nothing will replace). A job or node with an alloc that is not
// done is never collected (promise 2).
func allocDone(a *structs.Allocation) bool {
	return a.ClientTerminalStatus()
}

// collect deletes terminal evals and their allocs, purges stopped
// or finished jobs with nothing left, and removes down nodes with nothing
// left, each as one raft entry. It returns the last index written.
//
// What to collect is decided on a read of the state, and raft may apply
// other entries before the deletion: a job registered again, a node that
// came back. So every entry carries what the read saw (the job's and the
// node's ModifyIndex) and the FSM checks it again, skipping whatever
// changed; the rules themselves live in the state package
// (state.AllocIsGCable, state.JobIsGCable) so both sides apply the same.
func (c coreGC) collect(g gcThresholds) (uint64, error) {
	var last uint64
	idx, err := c.collectEvals(g)
	if err != nil {
		return 0, err
	}
	last = max(last, idx)
	if idx, err = c.collectJobs(g); err != nil {
		return 0, err
	}
	last = max(last, idx)
	if idx, err = c.collectNodes(g); err != nil {
		return 0, err
	}
	return max(last, idx), nil
}

// collectEvals deletes terminal evals together with their allocs, when
// every alloc of the eval may go (state.AllocIsGCable): finished on its
// client and no longer needed by the scheduler. A completed batch alloc of
// a job that is still running holds its slot, and a failed alloc waiting
// to be rescheduled holds its reschedule history; deleting either would
// make the scheduler run the work again from scratch, so the eval and its
// allocs wait until the job is done.
func (c coreGC) collectEvals(g gcThresholds) (uint64, error) {
	st := c.deps.State()
	jobs := map[structs.NamespacedID]*structs.Job{}
	jobOf := func(namespace, id string) (*structs.Job, error) {
		key := structs.NamespacedID{Namespace: namespace, ID: id}
		if job, ok := jobs[key]; ok {
			return job, nil
		}
		job, err := st.JobByID(nil, namespace, id)
		if err != nil {
			return nil, err
		}
		jobs[key] = job
		return job, nil
	}

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
			job, err := jobOf(a.Namespace, a.JobID)
			if err != nil {
				return 0, err
			}
			if !state.AllocIsGCable(a, job) || !g.old(a.ModifyTime, g.eval) {
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
	if len(evalIDs) == 0 {
		return 0, nil
	}
	idx, _, err := c.deps.raftApply(structs.EvalDeleteRequestType, &structs.EvalDeleteRequest{Evals: evalIDs, Allocs: allocIDs})
	return idx, err
}

// collectJobs purges jobs that may be collected (the jobs table's gc
// index, state.JobIsGCable: dead, and stopped or a finished batch job) with
// no alloc still held by a client and no unfinished eval. A service job
// that is merely dead (scaled to zero, or out of reschedules) is the
// user's until they stop it. Each purge is conditional on the job's
// ModifyIndex as read here.
func (c coreGC) collectJobs(g gcThresholds) (uint64, error) {
	st := c.deps.State()
	jobs := map[structs.NamespacedID]*structs.JobDeregisterOptions{}
	jit, err := st.JobsByGC(nil, true)
	if err != nil {
		return 0, err
	}
	for raw := jit.Next(); raw != nil; raw = jit.Next() {
		job := raw.(*structs.Job)
		if !g.old(job.SubmitTime, g.job) {
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
			jobs[job.NamespacedID()] = &structs.JobDeregisterOptions{Purge: true, ExpectedModifyIndex: job.ModifyIndex}
		}
	}
	if len(jobs) == 0 {
		return 0, nil
	}
	idx, _, err := c.deps.raftApply(structs.JobBatchDeregisterRequestType, &structs.JobBatchDeregisterRequest{Jobs: jobs})
	return idx, err
}

// collectNodes removes down nodes with nothing left running, each
// conditional on the node's ModifyIndex as read here.
func (c coreGC) collectNodes(g gcThresholds) (uint64, error) {
	st := c.deps.State()
	var nodeIDs []string
	expected := map[string]uint64{}
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
			expected[node.ID] = node.ModifyIndex
		}
	}
	if len(nodeIDs) == 0 {
		return 0, nil
	}
	idx, _, err := c.deps.raftApply(structs.NodeBatchDeregisterRequestType, &structs.NodeBatchDeregisterRequest{NodeIDs: nodeIDs, NodeModifyIndexes: expected})
	return idx, err
}
