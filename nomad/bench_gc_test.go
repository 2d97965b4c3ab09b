package nomad

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/drover-sched/drover/nomad/fsm"
	"github.com/drover-sched/drover/nomad/planner"
	"github.com/drover-sched/drover/nomad/planner/plannertest"
	"github.com/drover-sched/drover/nomad/raftlog"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/scheduler/feasible"
	"github.com/drover-sched/drover/structs"
)

// BenchmarkCoreGC100kAllocs collects 100,000 terminal allocs (100
// finished batch jobs, 10 evals of 100 allocs each) through a real
// single-node raft (raft-boltdb on disk, the server's FSM), while the
// plan applier commits a steady stream of plans through the same raft:
//
//	go test -run '^$' -bench CoreGC100k -benchtime 1x ./nomad/
//
// It reports how long the collection takes, how many entries it writes
// and the largest entry's size, and the plan applier's latency (submit to
// commit) before and while the GC runs.
func BenchmarkCoreGC100kAllocs(b *testing.B) {
	const (
		jobs          = 100
		evalsPerJob   = 10
		allocsPerEval = 100
		planRate      = 200 // plans per second while measuring
	)
	for range b.N {
		b.StopTimer()
		r := newBenchGCRaft(b)
		st := r.fsm.State()
		node := fsmTestNode("n1")
		node.NodeResources.Cpu.CpuShares, node.NodeResources.Memory.MemoryMB, node.NodeResources.Disk.DiskMB = 1<<40, 1<<40, 1<<40
		if err := st.Write(1, func(tx *state.Txn) error { return tx.UpsertNode(node, nil) }); err != nil {
			b.Fatal(err)
		}
		for j := range jobs {
			job := fsmTestJob(fmt.Sprintf("batch-%03d", j))
			job.Type = structs.JobTypeBatch
			if err := st.Write(1, func(tx *state.Txn) error { return tx.UpsertJob(job) }); err != nil {
				b.Fatal(err)
			}
			for e := range evalsPerJob {
				ev := evalFor(fmt.Sprintf("e-%03d-%02d", j, e), job, structs.EvalStatusComplete)
				if err := st.Write(1, func(tx *state.Txn) error { return tx.UpsertEvals([]*structs.Evaluation{ev}) }); err != nil {
					b.Fatal(err)
				}
				allocs := make([]*structs.Allocation, allocsPerEval)
				for k := range allocs {
					a := fsmTestAlloc(fmt.Sprintf("a-%03d-%02d-%03d", j, e, k), node.ID, job, ev.ID)
					a.ClientStatus = structs.AllocClientStatusComplete
					allocs[k] = a
				}
				if err := st.Write(1, func(tx *state.Txn) error { return tx.UpsertAllocs(allocs) }); err != nil {
					b.Fatal(err)
				}
			}
		}
		// The plans go to a node of their own, so that their cost does not
		// fall as the GC empties n1.
		other := fsmTestNode("n2")
		other.NodeResources.Cpu.CpuShares, other.NodeResources.Memory.MemoryMB, other.NodeResources.Disk.DiskMB = 1<<40, 1<<40, 1<<40
		if err := st.Write(1, func(tx *state.Txn) error { return tx.UpsertNode(other, nil) }); err != nil {
			b.Fatal(err)
		}
		live := feasible.MockJob()
		if err := st.Write(1, func(tx *state.Txn) error { return tx.UpsertJob(live) }); err != nil {
			b.Fatal(err)
		}

		queue := planner.NewQueue()
		queue.SetEnabled(true)
		applier := planner.NewApplier(queue, planner.Config{State: plannerState(r.State), Raft: r, Workers: 2, GroupCommit: true})
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); applier.Run(ctx) }()

		// The submitter sends planRate plans a second and records each
		// one's latency into the window current when it was sent.
		var mu sync.Mutex
		var before, during []time.Duration
		window := &before
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(time.Second / planRate)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				p := plannertest.Plan(live, plannertest.AllocOn(live, other, 1, 1))
				start := time.Now()
				fut, err := queue.Enqueue(p)
				if err != nil {
					return
				}
				if _, err := fut.Wait(); err != nil {
					return
				}
				mu.Lock()
				*window = append(*window, time.Since(start))
				mu.Unlock()
			}
		}()
		// A baseline second before the GC.
		baseline := time.NewTimer(time.Second)
		<-baseline.C
		mu.Lock()
		window = &during
		mu.Unlock()

		b.StartTimer()
		start := time.Now()
		if _, err := (coreGC{deps: r}).collect(gcThresholds{force: true}); err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		b.StopTimer()
		mu.Lock()
		window = new([]time.Duration)
		mu.Unlock()
		queue.SetEnabled(false)
		cancel()
		wg.Wait()

		it, _ := st.Allocs(nil)
		left := 0
		for raw := it.Next(); raw != nil; raw = it.Next() {
			if raw.(*structs.Allocation).JobID != live.ID {
				left++
			}
		}
		if left != 0 {
			b.Fatalf("%d terminal allocs left after the GC", left)
		}
		entries, maxBytes := 0, 0
		for _, e := range r.entries {
			entries++
			maxBytes = max(maxBytes, e.bytes)
		}
		b.ReportMetric(took.Seconds(), "gc-s")
		b.ReportMetric(float64(entries), "gc-entries")
		b.ReportMetric(float64(maxBytes), "max-entry-B")
		for name, w := range map[string][]time.Duration{"before": before, "during": during} {
			if len(w) == 0 {
				continue
			}
			slices.Sort(w)
			b.ReportMetric(float64(w[len(w)/2].Microseconds())/1000, "plan-p50-ms-"+name)
			b.ReportMetric(float64(w[len(w)*99/100].Microseconds())/1000, "plan-p99-ms-"+name)
			b.ReportMetric(float64(w[len(w)-1].Microseconds())/1000, "plan-max-ms-"+name)
		}
		r.shutdown(b)
	}
}

// benchGCRaft is a single-node hashicorp/raft over raft-boltdb with the
// server's FSM, serving both the GC (gcDeps) and the plan applier
// (planner.Raft), as the leader's raft serves both.
type benchGCRaft struct {
	fsm  *fsm.FSM
	raft *raft.Raft

	mu      sync.Mutex
	entries []gcEntry
}

func newBenchGCRaft(b *testing.B) *benchGCRaft {
	fsm, err := fsm.New(hclog.NewNullLogger(), nil)
	if err != nil {
		b.Fatal(err)
	}
	conf := benchRaftConfig()
	bolt, err := raftboltdb.NewBoltStore(filepath.Join(b.TempDir(), "raft.db"))
	if err != nil {
		b.Fatal(err)
	}
	addr, trans := raft.NewInmemTransport("")
	snaps := raft.NewInmemSnapshotStore()
	cfg := raft.Configuration{Servers: []raft.Server{{ID: conf.LocalID, Address: addr}}}
	if err := raft.BootstrapCluster(conf, bolt, bolt, snaps, trans, cfg); err != nil {
		b.Fatal(err)
	}
	r, err := raft.NewRaft(conf, fsm, bolt, bolt, snaps, trans)
	if err != nil {
		b.Fatal(err)
	}
	select {
	case <-r.LeaderCh():
	case <-time.After(10 * time.Second):
		b.Fatal("no leader")
	}
	b.Cleanup(func() { bolt.Close() })
	return &benchGCRaft{fsm: fsm, raft: r}
}

func (r *benchGCRaft) shutdown(b *testing.B) {
	if err := r.raft.Shutdown().Error(); err != nil {
		b.Fatal(err)
	}
}

func (r *benchGCRaft) State() *state.StateStore { return r.fsm.State() }
func (r *benchGCRaft) Now() time.Time           { return time.Now() }

func (r *benchGCRaft) ApplyPlanResults(req *structs.ApplyPlanResultsRequest) (planner.RaftFuture, error) {
	buf, err := raftlog.Encode(structs.ApplyPlanResultsRequestType, req)
	if err != nil {
		return nil, err
	}
	return fsmErrorFuture{r.raft.Apply(buf, 0)}, nil
}

func (r *benchGCRaft) raftApply(t structs.MessageType, msg any) (uint64, any, error) {
	buf, err := raftlog.Encode(t, msg)
	if err != nil {
		return 0, nil, err
	}
	r.mu.Lock()
	r.entries = append(r.entries, gcEntry{kind: t, bytes: len(buf)})
	r.mu.Unlock()
	f := fsmErrorFuture{r.raft.Apply(buf, 0)}
	if err := f.Error(); err != nil {
		return 0, nil, err
	}
	return f.Index(), f.Response(), nil
}
