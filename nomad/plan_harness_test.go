package nomad

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/nomad/state/statetest"
	"github.com/drover-sched/drover/scheduler/feasible"
	"github.com/drover-sched/drover/structs"
)

// testPlanDeps commits plans straight into a real state store with
// increasing raft indexes. With lazy set, an entry is applied only when
// the applier first waits on its future (entries still apply in order), so
// the applier always checks the next plan while the previous one is truly
// not in the store yet: pipelining is exercised deterministically.
type testPlanDeps struct {
	store *state.StateStore

	mu      sync.Mutex
	index   uint64
	entries []*structs.ApplyPlanResultsRequest
	// fail, if set, decides whether an entry fails (as a raft error would)
	// before it reaches the store.
	fail func(req *structs.ApplyPlanResultsRequest) error

	// afterApply, if set, runs after each committed entry, under mu.
	afterApply func(index uint64, req *structs.ApplyPlanResultsRequest)

	lazy    bool
	waiting []*testFuture // submitted, not yet applied (lazy)
}

type testFuture struct {
	deps  *testPlanDeps
	req   *structs.ApplyPlanResultsRequest
	done  chan struct{}
	err   error
	index uint64
}

func (f *testFuture) wait() {
	if f.deps.lazy {
		f.deps.applyThrough(f)
	}
	<-f.done
}

func (f *testFuture) Error() error  { f.wait(); return f.err }
func (f *testFuture) Index() uint64 { f.wait(); return f.index }

func (d *testPlanDeps) State() *state.StateStore { return d.store }
func (d *testPlanDeps) Now() time.Time           { return testEpoch }

func (d *testPlanDeps) RaftApplyPlan(req *structs.ApplyPlanResultsRequest) (raftFuture, error) {
	f := &testFuture{deps: d, req: req, done: make(chan struct{})}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lazy {
		d.waiting = append(d.waiting, f)
		return f, nil
	}
	d.applyLocked(req, f)
	return f, nil
}

// applyThrough applies the waiting entries up to and including f.
func (d *testPlanDeps) applyThrough(f *testFuture) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, w := range d.waiting {
		if w == f {
			for _, w := range d.waiting[:i+1] {
				d.applyLocked(w.req, w)
			}
			d.waiting = d.waiting[i+1:]
			return
		}
	}
}

func (d *testPlanDeps) applyLocked(req *structs.ApplyPlanResultsRequest, f *testFuture) {
	defer close(f.done)
	d.entries = append(d.entries, req)
	if d.fail != nil {
		if f.err = d.fail(req); f.err != nil {
			return
		}
	}
	d.index++
	f.index = d.index
	f.err = d.store.UpsertPlanResults(d.index, req)
	if f.err == nil && d.afterApply != nil {
		d.afterApply(d.index, req)
	}
}

// tryWrite is write for goroutines other than the test's: it returns the
// error instead of failing the test.
func (d *testPlanDeps) tryWrite(fn func(index uint64) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.index++
	return fn(d.index)
}

// write applies a setup or client change at the next index.
func (d *testPlanDeps) write(t testing.TB, fn func(index uint64) error) uint64 {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.index++
	if err := fn(d.index); err != nil {
		t.Fatalf("state write at %d: %v", d.index, err)
	}
	return d.index
}

func (d *testPlanDeps) entryCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.entries)
}

type planHarness struct {
	t     testing.TB
	deps  *testPlanDeps
	queue *PlanQueue
	stop  func()
}

func newPlanHarness(t testing.TB) *planHarness {
	h := &planHarness{t: t, deps: &testPlanDeps{store: statetest.New(t)}, queue: NewPlanQueue()}
	h.queue.SetEnabled(true)
	t.Cleanup(func() {
		if h.stop != nil {
			h.stop()
		}
	})
	return h
}

// start runs the applier until the test ends; lazy delays commits until
// the applier waits for them.
func (h *planHarness) start(opts PlanApplierOptions, lazy bool) {
	h.deps.mu.Lock()
	h.deps.lazy = lazy
	h.deps.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	applier := newPlanApplier(h.deps, h.queue, nil, opts)
	done := make(chan struct{})
	go func() {
		defer close(done)
		applier.run(ctx)
	}()
	h.stop = func() {
		h.queue.SetEnabled(false)
		cancel()
		<-done
	}
}

func (h *planHarness) submit(plan *structs.Plan) (*structs.PlanResult, error) {
	fut, err := h.queue.Enqueue(plan)
	if err != nil {
		return nil, err
	}
	return fut.Wait()
}

func (h *planHarness) mustSubmit(plan *structs.Plan) *structs.PlanResult {
	h.t.Helper()
	res, err := h.submit(plan)
	if err != nil {
		h.t.Fatalf("plan %s: %v", plan.EvalID, err)
	}
	return res
}

func (h *planHarness) node(mut func(*structs.Node)) *structs.Node {
	n := feasible.MockNode()
	if mut != nil {
		mut(n)
	}
	h.deps.write(h.t, func(i uint64) error { return h.deps.store.UpsertNode(i, n) })
	return n
}

func (h *planHarness) job() *structs.Job {
	j := feasible.MockJob()
	h.deps.write(h.t, func(i uint64) error { return h.deps.store.UpsertJob(i, j) })
	stored, err := h.deps.store.JobByID(nil, j.Namespace, j.ID)
	if err != nil || stored == nil {
		h.t.Fatalf("job: %v", err)
	}
	return stored
}

// existing writes allocs as if an earlier plan had placed them.
func (h *planHarness) existing(allocs ...*structs.Allocation) {
	h.deps.write(h.t, func(i uint64) error { return h.deps.store.UpsertAllocs(i, allocs) })
}

// client reports a client status for an alloc.
func (h *planHarness) client(id, status string) {
	h.deps.write(h.t, func(i uint64) error {
		return h.deps.store.UpdateAllocsFromClient(i, []*structs.Allocation{{ID: id, ClientStatus: status}})
	})
}

func (h *planHarness) alloc(id string) *structs.Allocation {
	a, err := h.deps.store.AllocByID(nil, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return a
}

// testAllocOn returns a new alloc of job on node using cpu MHz and mem MB,
// holding the given static host ports.
func testAllocOn(job *structs.Job, node *structs.Node, cpu, mem int64, ports ...int) *structs.Allocation {
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

func testPlan(job *structs.Job, place ...*structs.Allocation) *structs.Plan {
	p := (&structs.Evaluation{ID: feasible.MockID(), Priority: job.Priority}).MakePlan(job)
	for _, a := range place {
		p.AppendAlloc(a)
	}
	return p
}

var errTestRaft = errors.New("test raft: leadership lost")
