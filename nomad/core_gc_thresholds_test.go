package nomad

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/nomad/fsm"
	"github.com/drover-sched/drover/nomad/raftlog"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// fsmGCDeps commits GC entries to a real FSM, as raft would on every
// server, and records each entry's size and object count.
type fsmGCDeps struct {
	t       testing.TB
	fsm     *fsm.FSM
	index   uint64
	entries []gcEntry
}

type gcEntry struct {
	kind    structs.MessageType
	bytes   int
	objects int
}

func newFSMGCDeps(t testing.TB) *fsmGCDeps {
	f, err := fsm.New(hclog.NewNullLogger(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return &fsmGCDeps{t: t, fsm: f, index: 1000}
}

func (d *fsmGCDeps) State() *state.StateStore { return d.fsm.State() }

func (d *fsmGCDeps) raftApply(t structs.MessageType, msg any) (uint64, any, error) {
	buf, err := raftlog.Encode(t, msg)
	if err != nil {
		return 0, nil, err
	}
	n := 0
	switch m := msg.(type) {
	case *structs.EvalDeleteRequest:
		n = len(m.Evals) + len(m.Allocs)
	case *structs.JobBatchDeregisterRequest:
		n = len(m.Jobs)
	case *structs.NodeBatchDeregisterRequest:
		n = len(m.NodeIDs)
	case *structs.DeploymentDeleteRequest:
		n = len(m.Deployments)
	}
	d.entries = append(d.entries, gcEntry{kind: t, bytes: len(buf), objects: n})
	d.index++
	resp := d.fsm.Apply(&raft.Log{Index: d.index, Type: raft.LogCommand, Data: buf})
	if err, ok := resp.(error); ok {
		return d.index, nil, err
	}
	return d.index, resp, nil
}

// nextIndex returns a fresh raft index for writing a fixture.
func (d *fsmGCDeps) nextIndex() uint64 { d.index++; return d.index }

var gcT0 = time.Unix(1_800_000_000, 0)

// gcThresholdFixture holds, all terminal since gcT0: a stopped service
// job "svc" with its complete eval and stopped alloc, a finished batch
// job "batch" with its complete eval and completed alloc, a down node
// "gone" with nothing on it, and a successful deployment "dep". change,
// if set, may change each alloc before it is stored.
func gcThresholdFixture(t *testing.T, change func(*structs.Allocation)) *fsmGCDeps {
	t.Helper()
	d := newFSMGCDeps(t)
	st := d.State()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	node := fsmTestNode("n1")
	must(st.Write(d.nextIndex(), func(tx *state.Txn) error { return tx.UpsertNode(node, nil) }))
	for _, spec := range []struct{ id, typ string }{{"svc", structs.JobTypeService}, {"batch", structs.JobTypeBatch}} {
		job := fsmTestJob(spec.id)
		job.Type = spec.typ
		job.SubmitTime = gcT0.UnixNano()
		job.Stop = spec.typ == structs.JobTypeService
		must(st.Write(d.nextIndex(), func(tx *state.Txn) error { return tx.UpsertJob(job) }))
		ev := evalFor("e-"+spec.id, job, structs.EvalStatusComplete)
		ev.ModifyTime = gcT0.UnixNano()
		must(st.Write(d.nextIndex(), func(tx *state.Txn) error { return tx.UpsertEvals([]*structs.Evaluation{ev}) }))
		a := fsmTestAlloc("a-"+spec.id, node.ID, job, ev.ID)
		a.ClientStatus = structs.AllocClientStatusComplete
		if job.Stop {
			a.DesiredStatus = structs.AllocDesiredStatusStop
		}
		a.ModifyTime = gcT0.UnixNano()
		if change != nil {
			change(a)
		}
		must(st.Write(d.nextIndex(), func(tx *state.Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a}) }))
	}
	gone := fsmTestNode("gone")
	gone.Status, gone.StatusUpdatedAt = structs.NodeStatusDown, gcT0.Unix()
	must(st.Write(d.nextIndex(), func(tx *state.Txn) error { return tx.UpsertNode(gone, nil) }))
	must(st.Write(d.nextIndex(), func(tx *state.Txn) error {
		return tx.UpsertDeployment(&structs.Deployment{ID: "dep", Namespace: structs.DefaultNamespace, JobID: "svc",
			Status: structs.DeploymentStatusSuccessful, ModifyTime: gcT0.UnixNano()})
	}))
	return d
}

// Every kind keeps its objects until they have been terminal for their
// threshold, and collects them once they have.
func TestCoreGCCollectsEachKindOnlyPastItsThreshold(t *testing.T) {
	g := gcThresholds{eval: time.Hour, batchEval: 24 * time.Hour, job: 4 * time.Hour, node: 12 * time.Hour, deployment: 2 * time.Hour}
	exists := func(t *testing.T, d *fsmGCDeps, what string) bool {
		t.Helper()
		st := d.State()
		var obj any
		var err error
		switch what {
		case "eval e-svc":
			obj, err = st.EvalByID(nil, "e-svc")
		case "eval e-batch":
			obj, err = st.EvalByID(nil, "e-batch")
		case "job svc":
			obj, err = st.JobByID(nil, structs.DefaultNamespace, "svc")
		case "node gone":
			obj, err = st.NodeByID(nil, "gone")
		case "deployment dep":
			obj, err = st.DeploymentByID(nil, "dep")
		default:
			t.Fatalf("unknown object %q", what)
		}
		if err != nil {
			t.Fatal(err)
		}
		switch v := obj.(type) {
		case *structs.Evaluation:
			return v != nil
		case *structs.Job:
			return v != nil
		case *structs.Node:
			return v != nil
		case *structs.Deployment:
			return v != nil
		}
		return false
	}
	for _, tc := range []struct {
		name      string
		kind      gcKind
		object    string
		threshold time.Duration
	}{
		{"a service job's eval waits eval_gc_threshold", gcEvals, "eval e-svc", g.eval},
		{"a batch job's eval waits batch_eval_gc_threshold", gcEvals, "eval e-batch", g.batchEval},
		{"a stopped job waits job_gc_threshold", gcJobs, "job svc", g.job},
		{"a down node waits node_gc_threshold", gcNodes, "node gone", g.node},
		{"a finished deployment waits deployment_gc_threshold", gcDeployments, "deployment dep", g.deployment},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := gcThresholdFixture(t, nil)
			gc := coreGC{deps: d}
			g := g
			g.now = gcT0.Add(tc.threshold - time.Second)
			if _, err := gc.collectKind(context.Background(), tc.kind, g); err != nil {
				t.Fatal(err)
			}
			if !exists(t, d, tc.object) {
				t.Fatalf("%s was collected a second before its threshold (%s)", tc.object, tc.threshold)
			}
			g.now = gcT0.Add(tc.threshold)
			if _, err := gc.collectKind(context.Background(), tc.kind, g); err != nil {
				t.Fatal(err)
			}
			if exists(t, d, tc.object) {
				t.Fatalf("%s is still there at its threshold (%s)", tc.object, tc.threshold)
			}
		})
	}
}

// A collection larger than one entry may hold is cut into entries of at
// most gcMaxObjectsPerEntry objects, each far below the RPC message
// limit; an eval with more allocs than fit one entry goes with the last
// of them; in the end everything is gone.
func TestCoreGCSplitsALargeCollectionIntoBoundedEntries(t *testing.T) {
	d := newFSMGCDeps(t)
	st := d.State()
	job := fsmTestJob("big")
	job.Type = structs.JobTypeBatch
	job.SubmitTime = gcT0.UnixNano()
	if err := st.Write(d.nextIndex(), func(tx *state.Txn) error { return tx.UpsertJob(job) }); err != nil {
		t.Fatal(err)
	}
	// One eval with more allocs than one entry holds, then many small.
	sizes := []int{gcMaxObjectsPerEntry + 500, 3, 3000, 2000}
	total := 0
	for i, n := range sizes {
		ev := evalFor(fmt.Sprintf("e%d", i), job, structs.EvalStatusComplete)
		ev.ModifyTime = gcT0.UnixNano()
		if err := st.Write(d.nextIndex(), func(tx *state.Txn) error { return tx.UpsertEvals([]*structs.Evaluation{ev}) }); err != nil {
			t.Fatal(err)
		}
		allocs := make([]*structs.Allocation, n)
		for j := range allocs {
			a := fsmTestAlloc(fmt.Sprintf("a%d-%05d", i, j), "n1", job, ev.ID)
			a.ClientStatus, a.ModifyTime = structs.AllocClientStatusComplete, gcT0.UnixNano()
			allocs[j] = a
		}
		if err := st.Write(d.nextIndex(), func(tx *state.Txn) error { return tx.UpsertAllocs(allocs) }); err != nil {
			t.Fatal(err)
		}
		total += n + 1
	}
	if _, err := (coreGC{deps: d}).collect(gcThresholds{force: true}); err != nil {
		t.Fatal(err)
	}
	got := 0
	for i, e := range d.entries {
		if e.kind != structs.EvalDeleteRequestType {
			continue
		}
		if e.objects > gcMaxObjectsPerEntry || e.bytes > 1<<20 {
			t.Fatalf("entry %d names %d objects in %d bytes; want at most %d objects and 1 MiB", i, e.objects, e.bytes, gcMaxObjectsPerEntry)
		}
		got += e.objects
	}
	if got != total {
		t.Fatalf("the entries named %d objects; want %d", got, total)
	}
	it, _ := st.Evals(nil)
	if it.Next() != nil {
		t.Fatal("an eval is left")
	}
	ait, _ := st.Allocs(nil)
	if ait.Next() != nil {
		t.Fatal("an alloc is left")
	}
	if j, _ := st.JobByID(nil, structs.DefaultNamespace, "big"); j != nil {
		t.Fatal("the finished batch job is left")
	}
}

// An eval is deleted only once none of its allocs are left: a GC entry
// that names the eval but not all of its allocs keeps it. An entry without
// KeepEvalsWithAllocs (written before it existed) applies as it always did.
func TestFSMKeepsAnEvalWhileAnAllocOfItIsLeft(t *testing.T) {
	d := newFSMGCDeps(t)
	st := d.State()
	job := fsmTestJob("j")
	job.Stop = true
	if err := st.Write(d.nextIndex(), func(tx *state.Txn) error { return tx.UpsertJob(job) }); err != nil {
		t.Fatal(err)
	}
	ev := evalFor("e", job, structs.EvalStatusComplete)
	if err := st.Write(d.nextIndex(), func(tx *state.Txn) error { return tx.UpsertEvals([]*structs.Evaluation{ev}) }); err != nil {
		t.Fatal(err)
	}
	a1, a2 := fsmTestAlloc("a1", "n1", job, "e"), fsmTestAlloc("a2", "n1", job, "e")
	for _, a := range []*structs.Allocation{a1, a2} {
		a.DesiredStatus, a.ClientStatus = structs.AllocDesiredStatusStop, structs.AllocClientStatusComplete
	}
	if err := st.Write(d.nextIndex(), func(tx *state.Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a1, a2}) }); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.raftApply(structs.EvalDeleteRequestType, &structs.EvalDeleteRequest{Evals: []string{"e"}, Allocs: []string{"a1"}, KeepEvalsWithAllocs: true}); err != nil {
		t.Fatal(err)
	}
	if a, _ := st.AllocByID(nil, "a1"); a != nil {
		t.Fatal("a1 was named and may go, yet it is left")
	}
	if e, _ := st.EvalByID(nil, "e"); e == nil {
		t.Fatal("the eval was deleted while its alloc a2 is left")
	}
	if _, _, err := d.raftApply(structs.EvalDeleteRequestType, &structs.EvalDeleteRequest{Evals: []string{"e"}}); err != nil {
		t.Fatal(err)
	}
	if e, _ := st.EvalByID(nil, "e"); e != nil {
		t.Fatal("an entry without KeepEvalsWithAllocs must delete the eval, as entries always did")
	}
}

// However old, nothing live is collected (promise 2): a stopped job whose
// alloc its client still reports running keeps the job, its eval and the
// alloc; a down node still holding that alloc stays; a deployment still
// running stays; an eval not yet finished stays.
func TestCoreGCNeverCollectsWhatIsStillLive(t *testing.T) {
	d := gcThresholdFixture(t, func(a *structs.Allocation) {
		if a.ID == "a-svc" {
			a.ClientStatus, a.NodeID = structs.AllocClientStatusRunning, "gone"
		}
	})
	st := d.State()
	if a, _ := st.AllocByID(nil, "a-svc"); a.ClientStatus != structs.AllocClientStatusRunning {
		t.Fatalf("fixture: a-svc is %s; want running", a.ClientStatus)
	}
	pending := evalFor("e-pending", fsmTestJob("batch"), structs.EvalStatusPending)
	pending.Type, pending.ModifyTime = structs.JobTypeBatch, gcT0.UnixNano()
	if err := st.Write(d.nextIndex(), func(tx *state.Txn) error { return tx.UpsertEvals([]*structs.Evaluation{pending}) }); err != nil {
		t.Fatal(err)
	}
	if err := st.Write(d.nextIndex(), func(tx *state.Txn) error {
		return tx.UpsertDeployment(&structs.Deployment{ID: "live-dep", Namespace: structs.DefaultNamespace, JobID: "svc",
			Status: structs.DeploymentStatusRunning, ModifyTime: gcT0.UnixNano()})
	}); err != nil {
		t.Fatal(err)
	}
	g := gcThresholds{now: gcT0.Add(1000 * time.Hour), eval: time.Hour, batchEval: time.Hour, job: time.Hour, node: time.Hour, deployment: time.Hour}
	for _, k := range gcKinds {
		if _, err := (coreGC{deps: d}).collectKind(context.Background(), k, g); err != nil {
			t.Fatal(err)
		}
	}
	if j, _ := st.JobByID(nil, structs.DefaultNamespace, "svc"); j == nil {
		t.Fatal("a stopped job whose alloc still runs was collected")
	}
	if e, _ := st.EvalByID(nil, "e-svc"); e == nil {
		t.Fatal("the eval of an alloc that still runs was collected")
	}
	if a, _ := st.AllocByID(nil, "a-svc"); a == nil {
		t.Fatal("an alloc its client reports running was collected")
	}
	if n, _ := st.NodeByID(nil, "gone"); n == nil {
		t.Fatal("a down node still holding a running alloc was collected")
	}
	if dep, _ := st.DeploymentByID(nil, "live-dep"); dep == nil {
		t.Fatal("a running deployment was collected")
	}
	if e, _ := st.EvalByID(nil, "e-pending"); e == nil {
		t.Fatal("a pending eval was collected")
	}
	// The batch job has a pending eval, so it still runs: its completed
	// alloc holds its slot, and the alloc, its eval and the job all stay.
	if e, _ := st.EvalByID(nil, "e-batch"); e == nil {
		t.Fatal("the eval of a completed batch alloc was collected while its job still runs")
	}
	if j, _ := st.JobByID(nil, structs.DefaultNamespace, "batch"); j == nil {
		t.Fatal("a job with a pending eval was collected")
	}
}
