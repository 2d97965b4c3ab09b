package nomad

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/helper/tlsutil/tlstest"
	"github.com/drover-sched/drover/structs"
)

// BenchmarkPlacementOverRPC measures placements per second end to end over
// the RPC port, with and without mutual TLS: benchPlacementNodes mock nodes,
// each with its own connection pool as a client agent has, register and
// long-poll their assignments; jobs of one allocation each are registered
// over another pool (as a client-only agent's HTTP API would send them);
// the server schedules and plans them; each node fetches its new allocs
// and reports them running. The clock stops when every job's alloc is
// reported running. Raft is in memory, so the RPC path, not fsync, is what
// the two runs differ in.
func BenchmarkPlacementOverRPC(b *testing.B) {
	for _, mode := range []string{"plaintext", "tls"} {
		b.Run(mode, func(b *testing.B) { benchPlacement(b, mode == "tls") })
	}
}

const (
	benchPlacementNodes      = 20
	benchPlacementSubmitters = 4
)

func benchPlacement(b *testing.B, useTLS bool) {
	var ca *tlstest.CA
	if useTLS {
		ca = tlstest.NewCA(b)
	}
	s := testServer(b, func(c *Config) {
		c.DevMode, c.DataDir = true, ""
		c.NumSchedulers = 2
		// Sessions closing at the end make yamux log errors.
		c.Logger = hclog.NewNullLogger()
		// Nodes here do not heartbeat: keep them ready for the run.
		c.MinHeartbeatTTL = time.Hour
		if useTLS {
			c.TLS = ca.Manager(b, tlstest.Server, c.Region, nil)
		}
	})
	WaitForLeader(b, 10*time.Second, s)
	newPool := func() *rpcx.ConnPool {
		cfg := rpcx.PoolConfig{}
		if useTLS {
			cfg.TLS = ca.Manager(b, tlstest.Client, "global", nil).OutgoingRPC()
		}
		p := rpcx.NewConnPool(cfg)
		b.Cleanup(p.Shutdown)
		return p
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := s.RPCAddr()

	// placed counts allocs reported running and closes all once b.N are.
	placed := &placedCounter{want: int64(b.N), all: make(chan struct{})}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for i := range benchPlacementNodes {
		node := itNode(fmt.Sprintf("bench-node-%02d", i))
		node.NodeResources.Cpu.CpuShares = 1 << 30
		node.NodeResources.Memory.MemoryMB = 1 << 30
		node.NodeResources.Disk.DiskMB = 1 << 30
		pool := newPool()
		var resp structs.NodeUpdateResponse
		if err := pool.RPC(ctx, addr, "Node.Register", &structs.NodeRegisterRequest{Node: node}, &resp); err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			benchNodeLoop(ctx, b, pool, addr, node, placed)
		}()
	}

	submit := newPool()
	// One call first, so the TLS handshake of the submitting pool is
	// not part of the measurement (a client's pool does it once).
	var leader string
	if err := submit.RPC(ctx, addr, "Status.Leader", &structs.GenericRequest{}, &leader); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var next atomic.Int64
	var subs sync.WaitGroup
	for range benchPlacementSubmitters {
		subs.Add(1)
		go func() {
			defer subs.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				var resp structs.JobRegisterResponse
				if err := submit.RPC(ctx, addr, "Job.Register", &structs.JobRegisterRequest{Job: itJob(fmt.Sprintf("bench-%d", i), 1)}, &resp); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	subs.Wait()
	select {
	case <-placed.all:
	case <-time.After(5 * time.Minute):
		b.Fatalf("only %d of %d allocations running after 5 minutes", placed.n.Load(), b.N)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "placements/s")
}

// benchNodeLoop is a client's alloc watcher reduced to its RPCs: a
// blocking query for the node's allocs, a fetch of the new ones, and a
// report that they run.
func benchNodeLoop(ctx context.Context, b *testing.B, pool *rpcx.ConnPool, addr string, node *structs.Node, placed *placedCounter) {
	seen := map[string]bool{}
	var index uint64
	for ctx.Err() == nil {
		var resp structs.NodeClientAllocsResponse
		req := &structs.NodeSpecificRequest{NodeID: node.ID, SecretID: node.SecretID,
			QueryOptions: structs.QueryOptions{MinQueryIndex: index, MaxQueryTime: time.Second}}
		if err := pool.RPC(ctx, addr, "Node.GetClientAllocs", req, &resp); err != nil {
			if ctx.Err() == nil {
				b.Errorf("node %s: %v", node.ID, err)
			}
			return
		}
		index = resp.Index
		var fresh []string
		for id := range resp.Allocs {
			if !seen[id] {
				fresh = append(fresh, id)
			}
		}
		if len(fresh) == 0 {
			continue
		}
		var got structs.AllocsGetResponse
		if err := pool.RPC(ctx, addr, "Alloc.GetAllocs", &structs.AllocsGetRequest{AllocIDs: fresh, NodeID: node.ID, SecretID: node.SecretID}, &got); err != nil {
			if ctx.Err() == nil {
				b.Errorf("node %s: %v", node.ID, err)
			}
			return
		}
		var update []*structs.Allocation
		for _, a := range got.Allocs {
			seen[a.ID] = true
			update = append(update, &structs.Allocation{ID: a.ID, NodeID: a.NodeID, ClientStatus: structs.AllocClientStatusRunning})
		}
		var gr structs.GenericResponse
		if err := pool.RPC(ctx, addr, "Node.UpdateAlloc", &structs.AllocUpdateRequest{Alloc: update, NodeID: node.ID, SecretID: node.SecretID}, &gr); err != nil {
			if ctx.Err() == nil {
				b.Errorf("node %s: %v", node.ID, err)
			}
			return
		}
		placed.add(len(update))
	}
}

// placedCounter counts allocs reported running and closes all when want
// have been.
type placedCounter struct {
	want int64
	n    atomic.Int64
	all  chan struct{}
	once sync.Once
}

func (p *placedCounter) add(k int) {
	if p.n.Add(int64(k)) >= p.want {
		p.once.Do(func() { close(p.all) })
	}
}
