package nomad

import (
	"context"
	"fmt"
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

// collectGarbage runs one forced collection of every kind on this server.
func (s *Server) collectGarbage(g gcThresholds) (uint64, error) {
	return coreGC{deps: s}.collect(g)
}

// gcMaxObjectsPerEntry bounds one GC raft entry: the number of objects
// (eval, alloc, job, node or deployment IDs) it names. An ID is 36 bytes,
// so an entry is about 13 KB, far below the RPC message limit
// (rpcx.DefaultMaxMessageSize, 16 MiB), and applying it deletes at most
// this many records in one transaction. The plan applier's entries go
// through raft between GC entries, so what bounds its wait is the apply
// time of one entry: on a shared 2-core machine BenchmarkCoreGC100kAllocs
// collects 100,000 allocs in 101 entries in about 2 s, with plan commits
// at p99 35-60 ms while it runs; 4096 objects per entry made the GC
// slower (memdb's cost per write grows with the transaction) and the
// plans' worst wait about 250 ms.
const gcMaxObjectsPerEntry = 1024

// gcThresholds says how old a terminal object must be to be collected.
// force collects every terminal object at once. batchEval is the eval
// threshold for the evals (and their allocs) of batch jobs.
type gcThresholds struct {
	force      bool
	now        time.Time
	eval       time.Duration
	batchEval  time.Duration
	job        time.Duration
	node       time.Duration
	deployment time.Duration
}

func (g gcThresholds) old(modifyTime int64, threshold time.Duration) bool {
	return g.force || g.now.Sub(time.Unix(0, modifyTime)) >= threshold
}

// evalThreshold is the threshold an eval of the given job type waits.
func (g gcThresholds) evalThreshold(jobType string) time.Duration {
	if jobType == structs.JobTypeBatch {
		return g.batchEval
	}
	return g.eval
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

// anyLive reports whether any of allocs is not done (allocDone).
func anyLive(allocs []*structs.Allocation) bool {
	for _, a := range allocs {
		if !allocDone(a) {
			return true
		}
	}
	return false
}

// collect deletes terminal evals and their allocs, purges stopped
// or finished jobs with nothing left, removes down nodes with nothing
// left and terminal deployments, in bounded raft entries
// (gcMaxObjectsPerEntry). It returns the last index written.
//
// What to collect is decided on a read of the state, and raft may apply
// other entries before the deletion: a job registered again, a node that
// came back. So every entry carries what the read saw (the job's and the
// node's ModifyIndex) and the FSM checks it again, skipping whatever
// changed; the rules themselves live in the state package
// (state.AllocIsGCable, state.JobIsGCable) so both sides apply the same.
func (c coreGC) collect(g gcThresholds) (uint64, error) {
	var last uint64
	for _, kind := range gcKinds {
		idx, err := c.collectKind(context.Background(), kind, g)
		if err != nil {
			return 0, err
		}
		last = max(last, idx)
	}
	return last, nil
}

// collectKind runs the collection of one kind of object. ctx ends it
// between two raft entries (the leader loop's, on losing leadership).
func (c coreGC) collectKind(ctx context.Context, kind gcKind, g gcThresholds) (uint64, error) {
	switch kind {
	case gcEvals:
		return c.collectEvals(ctx, g)
	case gcJobs:
		return c.collectJobs(ctx, g)
	case gcNodes:
		return c.collectNodes(ctx, g)
	case gcDeployments:
		return c.collectDeployments(ctx, g)
	}
	return 0, fmt.Errorf("core gc: unknown kind %d", kind)
}

// apply writes one GC entry unless ctx has ended.
func (c coreGC) apply(ctx context.Context, t structs.MessageType, msg any) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	idx, _, err := c.deps.raftApply(t, msg)
	return idx, err
}

// collectEvals deletes terminal evals together with their allocs, when
// every alloc of the eval may go (state.AllocIsGCable): finished on its
// client and no longer needed by the scheduler. A completed batch alloc of
// a job that is still running holds its slot, and a failed alloc waiting
// to be rescheduled holds its reschedule history; deleting either would
// make the scheduler run the work again from scratch, so the eval and its
// allocs wait until the job is done.
//
// An eval goes in the same entry as its allocs. An eval with more allocs
// than one entry may name has them deleted over several entries and is
// deleted with the last (KeepEvalsWithAllocs: the FSM keeps an eval while
// any alloc of it is left).
func (c coreGC) collectEvals(ctx context.Context, g gcThresholds) (uint64, error) {
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

	var last uint64
	var evalIDs, allocIDs []string
	flush := func() error {
		if len(evalIDs)+len(allocIDs) == 0 {
			return nil
		}
		idx, err := c.apply(ctx, structs.EvalDeleteRequestType, &structs.EvalDeleteRequest{Evals: evalIDs, Allocs: allocIDs, KeepEvalsWithAllocs: true})
		evalIDs, allocIDs = nil, nil
		last = max(last, idx)
		return err
	}
	byEval := newJobAllocsBy(st, func(a *structs.Allocation) string { return a.EvalID })
	it, err := st.Evals(nil)
	if err != nil {
		return 0, err
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		ev := raw.(*structs.Evaluation)
		threshold := g.evalThreshold(ev.Type)
		if !ev.TerminalStatus() || !g.old(ev.ModifyTime, threshold) {
			continue
		}
		allocs, err := byEval.of(ev.Namespace, ev.JobID, ev.ID)
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
			if !state.AllocIsGCable(a, job) || !g.old(a.ModifyTime, threshold) {
				collectable = false
				break
			}
			ids = append(ids, a.ID)
		}
		if !collectable {
			continue
		}
		if len(evalIDs)+len(allocIDs)+1+len(ids) > gcMaxObjectsPerEntry {
			if err := flush(); err != nil {
				return last, err
			}
		}
		for len(ids)+1 > gcMaxObjectsPerEntry {
			allocIDs = ids[:gcMaxObjectsPerEntry]
			ids = ids[gcMaxObjectsPerEntry:]
			if err := flush(); err != nil {
				return last, err
			}
		}
		evalIDs = append(evalIDs, ev.ID)
		allocIDs = append(allocIDs, ids...)
	}
	return last, flush()
}

// collectJobs purges jobs that may be collected (the jobs table's gc
// index, state.JobIsGCable: dead, and stopped or a finished batch job) with
// no alloc still held by a client and no unfinished eval. A service job
// that is merely dead (scaled to zero, or out of reschedules) is the
// user's until they stop it. Each purge is conditional on the job's
// ModifyIndex as read here. A purge deletes the job's remaining evals and
// allocs with it, so each job counts them against the entry's bound.
func (c coreGC) collectJobs(ctx context.Context, g gcThresholds) (uint64, error) {
	st := c.deps.State()
	var last uint64
	jobs := map[structs.NamespacedID]*structs.JobDeregisterOptions{}
	weight := 0
	flush := func() error {
		if len(jobs) == 0 {
			return nil
		}
		idx, err := c.apply(ctx, structs.JobBatchDeregisterRequestType, &structs.JobBatchDeregisterRequest{Jobs: jobs})
		jobs, weight = map[structs.NamespacedID]*structs.JobDeregisterOptions{}, 0
		last = max(last, idx)
		return err
	}
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
		live := anyLive(allocs)
		evals, err := st.EvalsByJob(nil, job.Namespace, job.ID)
		if err != nil {
			return 0, err
		}
		for _, e := range evals {
			if !e.TerminalStatus() {
				live = true
			}
		}
		if live {
			continue
		}
		w := 1 + len(allocs) + len(evals)
		if weight > 0 && weight+w > gcMaxObjectsPerEntry {
			if err := flush(); err != nil {
				return last, err
			}
		}
		jobs[job.NamespacedID()] = &structs.JobDeregisterOptions{Purge: true, ExpectedModifyIndex: job.ModifyIndex}
		weight += w
	}
	return last, flush()
}

// collectNodes removes down nodes with nothing left running, each
// conditional on the node's ModifyIndex as read here.
func (c coreGC) collectNodes(ctx context.Context, g gcThresholds) (uint64, error) {
	st := c.deps.State()
	seen := map[string]uint64{} // node ID -> ModifyIndex as read
	batch := gcBatch{write: func(ids []string) (uint64, error) {
		expected := make(map[string]uint64, len(ids))
		for _, id := range ids {
			expected[id] = seen[id]
		}
		return c.apply(ctx, structs.NodeBatchDeregisterRequestType, &structs.NodeBatchDeregisterRequest{NodeIDs: ids, NodeModifyIndexes: expected})
	}}
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
		if anyLive(allocs) {
			continue
		}
		seen[node.ID] = node.ModifyIndex
		if err := batch.add(node.ID); err != nil {
			return batch.last, err
		}
	}
	return batch.done()
}

// collectDeployments deletes deployments that are over (not Active) and
// older than their threshold, unless an alloc of the deployment is still
// held by a client: its health still counts for the deployment's record.
// A finished deployment never becomes active again, so the FSM needs no
// second check.
func (c coreGC) collectDeployments(ctx context.Context, g gcThresholds) (uint64, error) {
	st := c.deps.State()
	batch := gcBatch{write: func(ids []string) (uint64, error) {
		return c.apply(ctx, structs.DeploymentDeleteRequestType, &structs.DeploymentDeleteRequest{Deployments: ids})
	}}
	it, err := st.Deployments(nil)
	if err != nil {
		return 0, err
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		d := raw.(*structs.Deployment)
		if d.Active() || !g.old(d.ModifyTime, g.deployment) {
			continue
		}
		allocs, err := st.AllocsByDeployment(nil, d.ID)
		if err != nil {
			return 0, err
		}
		if anyLive(allocs) {
			continue
		}
		if err := batch.add(d.ID); err != nil {
			return batch.last, err
		}
	}
	return batch.done()
}
