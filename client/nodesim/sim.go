package nodesim

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drover-sched/drover/client/allocsync"
	"github.com/drover-sched/drover/client/servers"
	"github.com/drover-sched/drover/helper/rpcx"
)

// ErrStopped is returned by calls attempted after Stop.
var ErrStopped = errors.New("nodesim: stopped")

// Sim is a running fleet of simulated nodes.
type Sim struct {
	cfg   Config
	log   interface{ Warn(string, ...any) }
	sem   chan struct{}
	stats Stats

	ctx    context.Context
	cancel context.CancelFunc
	// wg counts the watch goroutines and the calls in flight; lifeMu
	// keeps a call from joining it once Stop has begun waiting.
	wg     sync.WaitGroup
	lifeMu sync.RWMutex

	shards []*shard
	nodes  []*node

	faultMu   sync.Mutex
	rnd       *rand.Rand
	returning []int // nodes of InjectFault still to come back
}

// shard is a group of nodes that share a connection pool and a source
// address; see the package doc.
type shard struct {
	pool *rpcx.ConnPool
	rpc  *servers.Manager
	// notices routes the alloc notices the servers push on the shard's
	// sessions to its nodes (server heap per node, issue 16).
	notices *allocsync.Router
}

// Stats counts what the fleet did; read it with Sim.Stats.
type Stats struct {
	Registrations     atomic.Int64
	Heartbeats        atomic.Int64
	HeartbeatFailures atomic.Int64
	AllocPolls        atomic.Int64
	AllocFetches      atomic.Int64
	UpdateCalls       atomic.Int64
	UpdatesRefused    atomic.Int64
	AllocsStarted     atomic.Int64
	AllocsRunning     atomic.Int64
	AllocsComplete    atomic.Int64
	AllocsFailed      atomic.Int64
	AllocsStopped     atomic.Int64
	NodesFaulted      atomic.Int64
	NodesReturned     atomic.Int64

	// Alloc-change notices (server heap per node, issue 16):
	// registrations made and notices received.
	NoticeRegistrations atomic.Int64
	AllocNotices        atomic.Int64
}

// Snapshot is a copy of Stats at one moment, for printing and JSON.
type Snapshot struct {
	Nodes             int
	Registered        int
	Registrations     int64
	Heartbeats        int64
	HeartbeatFailures int64
	AllocPolls        int64
	AllocFetches      int64
	UpdateCalls       int64
	UpdatesRefused    int64
	AllocsStarted     int64
	AllocsRunning     int64
	AllocsComplete    int64
	AllocsFailed      int64
	AllocsStopped     int64
	NodesFaulted      int64
	NodesReturned     int64

	NoticeRegistrations int64
	AllocNotices        int64
}

// New checks cfg and prepares the fleet; Start starts it.
func New(cfg Config) (*Sim, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("nodesim: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sim{cfg: cfg, log: cfg.Logger, sem: make(chan struct{}, cfg.Concurrency), ctx: ctx, cancel: cancel,
		rnd: rand.New(rand.NewSource(cfg.Seed ^ 0x5eed))}
	loopback := allLoopback(cfg.Servers)
	nShards := (cfg.Count + cfg.NodesPerShard - 1) / cfg.NodesPerShard
	for i := 0; i < nShards; i++ {
		router := allocsync.NewRouter(cfg.Logger)
		pc := rpcx.PoolConfig{Logger: cfg.Logger, TLS: cfg.TLS, OnNotice: router.OnNotice}
		if loopback {
			// 127.1.0.0/16: away from 127.0.0.1, where the servers listen.
			pc.LocalAddr = &net.TCPAddr{IP: net.IPv4(127, 1, byte(1+i/250), byte(1+i%250))}
		}
		pool := rpcx.NewConnPool(pc)
		s.shards = append(s.shards, &shard{pool: pool, rpc: servers.New(pool, cfg.Servers), notices: router})
	}
	ids := rand.New(rand.NewSource(cfg.Seed))
	for i := 0; i < cfg.Count; i++ {
		n, err := newNode(s, i, s.shards[i/cfg.NodesPerShard], ids)
		if err != nil {
			return nil, err
		}
		s.nodes = append(s.nodes, n)
	}
	return s, nil
}

func allLoopback(addrs []string) bool {
	for _, a := range addrs {
		host, _, err := net.SplitHostPort(a)
		if err != nil {
			return false
		}
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback() || ip.To4() == nil) {
			return false
		}
	}
	return true
}

// Start registers every node and starts its loops. Registrations are
// spread over the first second so the fleet does not arrive in one burst
// any more than a real one would after a cluster start.
func (s *Sim) Start() {
	for _, n := range s.nodes {
		n.start(time.Duration(s.jitterInt(int64(time.Second))))
	}
}

// Stop ends every node's loops and calls and closes the connections.
// Nodes are not deregistered: to the servers they simply go silent.
func (s *Sim) Stop() {
	s.lifeMu.Lock()
	s.cancel()
	s.lifeMu.Unlock()
	for _, n := range s.nodes {
		n.stopTimers()
	}
	s.wg.Wait()
	for _, sh := range s.shards {
		sh.pool.Shutdown()
	}
}

// NodeIDs returns the simulated nodes' IDs in index order.
func (s *Sim) NodeIDs() []string {
	out := make([]string, len(s.nodes))
	for i, n := range s.nodes {
		out[i] = n.id
	}
	return out
}

// Secret returns node i's secret, for tests that act as that node.
func (s *Sim) Secret(i int) string { return s.nodes[i].secret }

// Stats returns the counters now.
func (s *Sim) Stats() Snapshot {
	st := &s.stats
	reg := 0
	for _, n := range s.nodes {
		if n.isRegistered() {
			reg++
		}
	}
	return Snapshot{Nodes: len(s.nodes), Registered: reg, Registrations: st.Registrations.Load(), Heartbeats: st.Heartbeats.Load(),
		HeartbeatFailures: st.HeartbeatFailures.Load(), AllocPolls: st.AllocPolls.Load(), AllocFetches: st.AllocFetches.Load(),
		UpdateCalls: st.UpdateCalls.Load(), UpdatesRefused: st.UpdatesRefused.Load(), AllocsStarted: st.AllocsStarted.Load(),
		AllocsRunning: st.AllocsRunning.Load(), AllocsComplete: st.AllocsComplete.Load(), AllocsFailed: st.AllocsFailed.Load(),
		AllocsStopped: st.AllocsStopped.Load(), NodesFaulted: st.NodesFaulted.Load(), NodesReturned: st.NodesReturned.Load(),
		NoticeRegistrations: st.NoticeRegistrations.Load(), AllocNotices: st.AllocNotices.Load()}
}

// InjectFault cuts cfg.Fault.StopFraction of the nodes (chosen by the
// seed) off from the servers for cfg.Fault.For; ReturnFraction of those
// come back then. It returns the indexes of the nodes cut off and of those
// that will return.
func (s *Sim) InjectFault() (stopped, returning []int) {
	f := s.cfg.Fault
	if !f.Enabled() {
		return nil, nil
	}
	s.faultMu.Lock()
	perm := s.rnd.Perm(len(s.nodes))
	s.faultMu.Unlock()
	k := int(f.StopFraction*float64(len(s.nodes)) + 0.5)
	back := int(f.ReturnFraction*float64(k) + 0.5)
	stopped = perm[:k]
	returning = perm[:back]
	for j, i := range stopped {
		s.nodes[i].cutOff(f.For, j < back)
	}
	s.faultMu.Lock()
	s.returning = append(s.returning, returning...)
	s.faultMu.Unlock()
	return stopped, returning
}

// EndFault brings back now the nodes of InjectFault that were to come
// back after Fault.For, and returns how many it brought back. A benchmark
// uses it to end the outage once the servers have marked every node down,
// however long that took.
func (s *Sim) EndFault() int {
	s.faultMu.Lock()
	back := s.returning
	s.returning = nil
	s.faultMu.Unlock()
	for _, i := range back {
		s.nodes[i].reconnect()
	}
	return len(back)
}

// CutOff cuts node i off from the servers until Reconnect(i).
func (s *Sim) CutOff(i int) { s.nodes[i].cutOff(0, false) }

// Reconnect ends node i's outage: it heartbeats at once, then reports.
func (s *Sim) Reconnect(i int) { s.nodes[i].reconnect() }

// jitterInt is a random number in [0, n] from the fleet's source.
func (s *Sim) jitterInt(n int64) int64 {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	return s.rnd.Int63n(n + 1)
}

// call runs one non-blocking call within the fleet's concurrency budget.
func (s *Sim) call(ctx context.Context, sh *shard, timeout time.Duration, method string, args, reply any) error {
	s.lifeMu.RLock()
	if s.ctx.Err() != nil {
		s.lifeMu.RUnlock()
		return ErrStopped
	}
	s.wg.Add(1)
	s.lifeMu.RUnlock()
	defer s.wg.Done()
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.sem }()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return sh.rpc.RPC(ctx, method, args, reply)
}
