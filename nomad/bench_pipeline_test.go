package nomad

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/nomad/broker"
	"github.com/drover-sched/drover/nomad/planner"
	"github.com/drover-sched/drover/nomad/planner/plannertest"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/nomad/state/statetest"
	"github.com/drover-sched/drover/scheduler/feasible"
	"github.com/drover-sched/drover/structs"
)

// Benchmarks of the eval pipeline: `go test -run '^$' -bench . ./nomad/`.
//
// The plan-applier benchmarks submit plans from many concurrent workers
// (as the workers of a cluster would) and report plans/s and allocs/s,
// first against a store written directly (the applier's own cost), then
// through a real single-node raft with a raft-boltdb log on disk, where
// each raft entry costs an fsync and pipelining and group commit matter.

func BenchmarkEvalBroker_EnqueueDequeueAck(b *testing.B) {
	benchBrokerRoundTrips(b, broker.EvalBrokerConfig{NackTimeout: time.Minute, DeliveryLimit: 3})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "evals/s")
}

// benchBrokerRoundTrips enqueues b.N evals into a broker made with cfg,
// then dequeues and acks each.
func benchBrokerRoundTrips(b *testing.B, cfg broker.EvalBrokerConfig) {
	broker, err := broker.NewEvalBroker(cfg)
	if err != nil {
		b.Fatal(err)
	}
	broker.SetEnabled(true)
	evals := make([]*structs.Evaluation, b.N)
	for i := range evals {
		evals[i] = testEval(fmt.Sprintf("job-%d", i), 50+i%20, uint64(i+1))
	}
	ctx := context.Background()
	b.ResetTimer()
	for _, e := range evals {
		broker.Enqueue(e)
	}
	for range evals {
		e, tok, err := broker.Dequeue(ctx, []string{"service"})
		if err != nil {
			b.Fatal(err)
		}
		if err := broker.Ack(e.ID, tok); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvalBroker_ConcurrentWorkers(b *testing.B) {
	broker, err := broker.NewEvalBroker(broker.EvalBrokerConfig{NackTimeout: time.Minute, DeliveryLimit: 3})
	if err != nil {
		b.Fatal(err)
	}
	broker.SetEnabled(true)
	const workers = 8
	ctx, cancel := context.WithCancel(context.Background())
	var done atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				e, tok, err := broker.Dequeue(ctx, []string{"service", "batch"})
				if err != nil {
					return
				}
				if err := broker.Ack(e.ID, tok); err != nil {
					b.Error(err)
				}
				if done.Add(1) == int64(b.N) {
					cancel()
				}
			}
		}()
	}
	// A quarter of the evals share a job with the eval before them, so
	// they may find it busy and wait for their turn.
	for i := 0; i < b.N; i++ {
		job := i
		if i%4 == 3 {
			job = i - 1
		}
		broker.Enqueue(testEval(fmt.Sprintf("job-%d", job), 50, uint64(i+1)))
	}
	deadline := time.Now().Add(time.Minute)
	for done.Load() < int64(b.N) && time.Now().Before(deadline) {
		// Superseded evals are canceled by the leader, not delivered.
		if n := len(broker.Cancelable(1 << 20)); n > 0 {
			if done.Add(int64(n)) >= int64(b.N) {
				cancel()
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Millisecond):
		}
	}
	cancel()
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "evals/s")
}

var applierVariants = []struct {
	name string
	opts planner.Config
}{
	{"serial", planner.Config{Workers: 2, DisablePipelining: true}},
	{"pipelined", planner.Config{Workers: 2}},
	{"group-commit", planner.Config{Workers: 2, GroupCommit: true, DisablePipelining: true}},
	{"pipelined+group-commit", planner.Config{Workers: 2, GroupCommit: true}},
}

// benchDirectDeps commits into the store directly, synchronously.
type benchDirectDeps struct {
	store *state.StateStore
	mu    sync.Mutex
	index uint64
}

func (d *benchDirectDeps) ApplyPlanResults(req *structs.ApplyPlanResultsRequest) (planner.RaftFuture, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.index++
	return doneFuture{index: d.index, err: d.store.Write(d.index, func(tx *state.Txn) error { return tx.UpsertPlanResults(req) })}, nil
}

type doneFuture struct {
	index uint64
	err   error
}

func (f doneFuture) Error() error  { return f.err }
func (f doneFuture) Index() uint64 { return f.index }

func BenchmarkPlanApplier_InMemory(b *testing.B) {
	for _, v := range applierVariants {
		b.Run(v.name, func(b *testing.B) {
			store := statetest.New(b)
			benchPlanApplier(b, store, &benchDirectDeps{store: store, index: 1000}, v.opts)
		})
	}
}

func BenchmarkPlanApplier_RaftBoltDB(b *testing.B) {
	for _, v := range applierVariants {
		b.Run(v.name, func(b *testing.B) {
			store := statetest.New(b)
			deps := newBenchRaft(b, store)
			benchPlanApplier(b, store, deps, v.opts)
		})
	}
}

const (
	benchNodes         = 50
	benchJobs          = 100
	benchSubmitters    = 16
	benchAllocsPerPlan = 3
)

// benchPlanApplier submits b.N plans (of benchJobs jobs) from
// benchSubmitters goroutines, to an applier that reads store and commits
// through raft; each plan places benchAllocsPerPlan allocs on distinct
// nodes with room for all of them, so every plan commits and the numbers
// measure the pipeline, not refusals.
func benchPlanApplier(b *testing.B, store *state.StateStore, raft planner.Raft, opts planner.Config) {
	var jobs []*structs.Job
	for i := 0; i < benchJobs; i++ {
		job := feasible.MockJob()
		if err := store.Write(1, func(tx *state.Txn) error { return tx.UpsertJob(job) }); err != nil {
			b.Fatal(err)
		}
		jobs = append(jobs, job)
	}
	// Enough nodes that each ends with about 20 allocs whatever b.N is, so
	// the figures do not drift with the length of the run.
	nodeCount := max(benchNodes, b.N*benchAllocsPerPlan/20)
	var nodes []*structs.Node
	for i := 0; i < nodeCount; i++ {
		n := feasible.MockNode()
		n.NodeResources.Cpu.CpuShares = 1 << 40
		n.NodeResources.Memory.MemoryMB = 1 << 40
		n.NodeResources.Disk.DiskMB = 1 << 40
		if err := store.Write(uint64(2+i), func(tx *state.Txn) error { return tx.UpsertNode(n, nil) }); err != nil {
			b.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	plans := make([]*structs.Plan, b.N)
	for i := range plans {
		job := jobs[i%benchJobs]
		p := plannertest.Plan(job)
		for k := 0; k < benchAllocsPerPlan; k++ {
			p.AppendAlloc(plannertest.AllocOn(job, nodes[(i*benchAllocsPerPlan+k)%nodeCount], 10, 10))
		}
		plans[i] = p
	}

	queue := planner.NewQueue()
	queue.SetEnabled(true)
	opts.State, opts.Raft = plannerState(func() *state.StateStore { return store }), raft
	applier := planner.NewApplier(queue, opts)
	ctx, cancel := context.WithCancel(context.Background())
	applierDone := make(chan struct{})
	go func() {
		defer close(applierDone)
		applier.Run(ctx)
	}()
	defer func() {
		queue.SetEnabled(false)
		cancel()
		<-applierDone
	}()

	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for s := 0; s < benchSubmitters; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(len(plans)) {
					return
				}
				fut, err := queue.Enqueue(plans[i])
				if err != nil {
					b.Error(err)
					return
				}
				res, err := fut.Wait()
				if err != nil {
					b.Error(err)
					return
				}
				if len(res.RejectedNodes) > 0 {
					b.Errorf("plan refused on %v", res.RejectedNodes)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/secs, "plans/s")
	b.ReportMetric(float64(b.N*benchAllocsPerPlan)/secs, "allocs/s")
}

// benchRaftDeps commits through a single-node hashicorp/raft whose log and
// stable store is raft-boltdb on disk.
type benchRaftDeps struct {
	store *state.StateStore
	raft  *raft.Raft
}

func (d *benchRaftDeps) ApplyPlanResults(req *structs.ApplyPlanResultsRequest) (planner.RaftFuture, error) {
	buf, err := rpcx.Encode(req)
	if err != nil {
		return nil, err
	}
	return raftPlanFuture{d.raft.Apply(buf, 0)}, nil
}

// raftPlanFuture surfaces the FSM's error as the future's error.
type raftPlanFuture struct{ f raft.ApplyFuture }

func (r raftPlanFuture) Error() error {
	if err := r.f.Error(); err != nil {
		return err
	}
	if err, ok := r.f.Response().(error); ok {
		return err
	}
	return nil
}
func (r raftPlanFuture) Index() uint64 { return r.f.Index() }

// benchFSM applies plan results and nothing else.
type benchFSM struct{ store *state.StateStore }

func (f *benchFSM) Apply(l *raft.Log) any {
	var req structs.ApplyPlanResultsRequest
	if err := rpcx.Decode(l.Data, &req); err != nil {
		return err
	}
	return f.store.Write(l.Index, func(tx *state.Txn) error { return tx.UpsertPlanResults(&req) })
}
func (f *benchFSM) Snapshot() (raft.FSMSnapshot, error) {
	return nil, errors.New("bench FSM: no snapshots")
}
func (f *benchFSM) Restore(io.ReadCloser) error { return errors.New("bench FSM: no snapshots") }

// benchRaftConfig is a single voter's raft configuration for benchmarks:
// quick to elect itself, and never snapshotting while measured.
func benchRaftConfig() *raft.Config {
	conf := raft.DefaultConfig()
	conf.LocalID = "bench"
	conf.Logger = hclog.NewNullLogger()
	conf.HeartbeatTimeout = 50 * time.Millisecond
	conf.ElectionTimeout = 50 * time.Millisecond
	conf.LeaderLeaseTimeout = 50 * time.Millisecond
	conf.CommitTimeout = 5 * time.Millisecond
	conf.SnapshotThreshold = 1 << 62
	conf.SnapshotInterval = time.Hour
	return conf
}

func newBenchRaft(b *testing.B, store *state.StateStore) *benchRaftDeps {
	conf := benchRaftConfig()

	bolt, err := raftboltdb.NewBoltStore(filepath.Join(b.TempDir(), "raft.db"))
	if err != nil {
		b.Fatal(err)
	}
	snaps := raft.NewInmemSnapshotStore()
	addr, trans := raft.NewInmemTransport("")
	cfg := raft.Configuration{Servers: []raft.Server{{ID: conf.LocalID, Address: addr}}}
	if err := raft.BootstrapCluster(conf, bolt, bolt, snaps, trans, cfg); err != nil {
		b.Fatal(err)
	}
	r, err := raft.NewRaft(conf, &benchFSM{store: store}, bolt, bolt, snaps, trans)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := r.Shutdown().Error(); err != nil {
			b.Error(err)
		}
		_ = bolt.Close()
	})
	deadline := time.Now().Add(10 * time.Second)
	for r.State() != raft.Leader {
		if time.Now().After(deadline) {
			b.Fatal("bench raft did not elect itself")
		}
		select {
		case <-r.LeaderCh():
		case <-time.After(10 * time.Millisecond):
		}
	}
	// A barrier makes sure the leader's first entries are applied before
	// the store is read.
	if err := r.Barrier(10 * time.Second).Error(); err != nil {
		b.Fatal(err)
	}
	return &benchRaftDeps{store: store, raft: r}
}
