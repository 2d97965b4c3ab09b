// Package plannertest holds what tests of the plan applier share, in
// nomad/planner and in the server: Raft, a raft that commits plan results
// straight into a real state store, and fixtures for allocations and plans.
// Only tests import it.
package plannertest

import (
	"context"
	"sync"
	"testing"

	"github.com/drover-sched/drover/nomad/planner"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/scheduler/feasible"
	"github.com/drover-sched/drover/structs"
)

// Raft commits plans straight into a real state store with increasing raft
// indexes, and is the applier's StateSource over the same store. With lazy
// set (SetLazy), an entry is applied only when the applier first waits on
// its future (entries still apply in order), so the applier always checks
// the next plan while the previous one is truly not in the store yet:
// pipelining is exercised deterministically.
type Raft struct {
	store *state.StateStore

	// Fail, if set, decides whether an entry fails (as a raft error
	// would) before it reaches the store. Set it before the applier runs.
	Fail func(req *structs.ApplyPlanResultsRequest) error
	// AfterApply, if set, runs after each committed entry, under the
	// raft's lock. Set it before the applier runs.
	AfterApply func(index uint64, req *structs.ApplyPlanResultsRequest)

	mu      sync.Mutex
	index   uint64
	entries []*structs.ApplyPlanResultsRequest
	lazy    bool
	waiting []*future // submitted, not yet applied (lazy)
}

// NewRaft returns a raft over store.
func NewRaft(store *state.StateStore) *Raft {
	return &Raft{store: store}
}

// Store is the state store the raft commits into.
func (r *Raft) Store() *state.StateStore { return r.store }

// SetLazy delays (or no longer delays) commits until the applier waits
// for them.
func (r *Raft) SetLazy(lazy bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lazy = lazy
}

// SnapshotMinIndex implements planner.StateSource.
func (r *Raft) SnapshotMinIndex(ctx context.Context, index uint64) (planner.Snapshot, error) {
	snap, err := r.store.SnapshotMinIndex(ctx, index)
	if err != nil {
		return nil, err
	}
	return snap, nil
}

type future struct {
	raft  *Raft
	req   *structs.ApplyPlanResultsRequest
	done  chan struct{}
	err   error
	index uint64
}

func (f *future) wait() {
	f.raft.mu.Lock()
	lazy := f.raft.lazy
	f.raft.mu.Unlock()
	if lazy {
		f.raft.applyThrough(f)
	}
	<-f.done
}

func (f *future) Error() error  { f.wait(); return f.err }
func (f *future) Index() uint64 { f.wait(); return f.index }

// ApplyPlanResults implements planner.Raft.
func (r *Raft) ApplyPlanResults(req *structs.ApplyPlanResultsRequest) (planner.RaftFuture, error) {
	f := &future{raft: r, req: req, done: make(chan struct{})}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lazy {
		r.waiting = append(r.waiting, f)
		return f, nil
	}
	r.applyLocked(req, f)
	return f, nil
}

// applyThrough applies the waiting entries up to and including f.
func (r *Raft) applyThrough(f *future) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, w := range r.waiting {
		if w == f {
			for _, w := range r.waiting[:i+1] {
				r.applyLocked(w.req, w)
			}
			r.waiting = r.waiting[i+1:]
			return
		}
	}
}

func (r *Raft) applyLocked(req *structs.ApplyPlanResultsRequest, f *future) {
	defer close(f.done)
	r.entries = append(r.entries, req)
	if r.Fail != nil {
		if f.err = r.Fail(req); f.err != nil {
			return
		}
	}
	r.index++
	f.index = r.index
	f.err = r.store.Write(r.index, func(tx *state.Txn) error { return tx.UpsertPlanResults(req) })
	if f.err == nil && r.AfterApply != nil {
		r.AfterApply(r.index, req)
	}
}

// TryWrite is Write for goroutines other than the test's: it returns the
// error instead of failing the test.
func (r *Raft) TryWrite(fn func(index uint64) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.index++
	return fn(r.index)
}

// Write applies a setup or client change at the next index and returns
// the index.
func (r *Raft) Write(t testing.TB, fn func(index uint64) error) uint64 {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.index++
	if err := fn(r.index); err != nil {
		t.Fatalf("state write at %d: %v", r.index, err)
	}
	return r.index
}

// EntryCount is the number of plan entries submitted so far, failed ones
// included.
func (r *Raft) EntryCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.entries)
}

// AllocOn returns a new alloc of job on node using cpu MHz and mem MB,
// holding the given static host ports.
func AllocOn(job *structs.Job, node *structs.Node, cpu, mem int64, ports ...int) *structs.Allocation {
	a := feasible.MockAllocFor(job, job.TaskGroups[0], node, 0)
	for _, tr := range a.AllocatedResources.Tasks {
		tr.Cpu.CpuShares = cpu
		tr.Memory.MemoryMB = mem
	}
	a.AllocatedResources.Shared.DiskMB = 10
	for i, p := range ports {
		a.AllocatedResources.Shared.Ports = append(a.AllocatedResources.Shared.Ports,
			structs.AllocatedPortMapping{Label: "p" + string(rune('a'+i)), Value: p})
	}
	return a
}

// Plan returns a plan of a new eval of job placing the given allocs.
func Plan(job *structs.Job, place ...*structs.Allocation) *structs.Plan {
	p := (&structs.Evaluation{ID: feasible.MockID(), Priority: job.Priority}).MakePlan(job)
	for _, a := range place {
		p.AppendAlloc(a)
	}
	return p
}
