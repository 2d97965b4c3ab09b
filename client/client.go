package client

import (
	"context"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/client/allocrunner"
	"github.com/drover-sched/drover/client/allocsync"
	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/fingerprint"
	"github.com/drover-sched/drover/client/gc"
	"github.com/drover-sched/drover/client/network"
	"github.com/drover-sched/drover/client/servers"
	"github.com/drover-sched/drover/client/servicereg"
	"github.com/drover-sched/drover/client/state"
	"github.com/drover-sched/drover/client/taskenv"
	"github.com/drover-sched/drover/client/taskuser"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// Client is a running client agent. See the package doc for its goroutines.
type Client struct {
	cfg    *config.Config
	logger hclog.Logger
	clock  clock.Clock
	rpc    config.RPCer
	pool   *rpcx.ConnPool
	srv    *servers.Manager
	db     state.DB
	jit    *jitter

	drivers   map[string]drivers.Driver
	shutdowns []func()
	// network sets up allocs' own network namespaces; nil when the
	// client cannot (not root).
	network *network.Manager
	hostEnv map[string]string

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu              sync.Mutex
	node            *structs.Node
	lastHeartbeatOK time.Time
	heartbeatTTL    time.Duration
	heartbeatCh     chan struct{} // closed and replaced on each successful heartbeat
	registeredCh    chan struct{}
	registerOnce    sync.Once
	fenced          map[string]bool

	allocMu sync.RWMutex
	allocs  map[string]*allocrunner.AllocRunner
	// unassigned holds the allocs the servers no longer assign to this
	// node (they collected them): each one's directory goes as soon as
	// its runner is done, not when the local GC limits get to it.
	unassigned map[string]bool

	updates *updater
	// services keeps the node's native service registrations in step
	// with its allocs (issue 13).
	services *servicereg.Syncer
	gc       *gc.Collector
	// tokens resolves ACL tokens for the client's endpoints; nil while
	// ACLs are off.
	tokens *tokenCache

	// Alloc-change notices (server heap per node, issue 16).
	// allocNotices receives the notices the servers push for this node
	// (client/watcher.go); nil when calls do not go over the client's
	// own pool (an injected RPCer), which then watches with the blocking
	// query alone.
	allocNotices *allocsync.Mailbox

	// reregister asks the heartbeat loop to register the node again
	// (its drivers' health changed, driver_health.go).
	reregister atomic.Bool

	shutdownOnce sync.Once
}

// NewClient builds a client from cfg and starts it: restore local state,
// register, heartbeat, watch allocs, report, collect garbage.
func NewClient(cfg *config.Config) (*Client, error) {
	cfg.Canonicalize()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Client{
		cfg:          cfg,
		logger:       cfg.Logger.Named("client"),
		clock:        cfg.Clock,
		hostEnv:      taskenv.HostEnv(cfg.ReadList("env.denylist")),
		heartbeatCh:  make(chan struct{}),
		registeredCh: make(chan struct{}),
		fenced:       map[string]bool{},
		allocs:       map[string]*allocrunner.AllocRunner{},
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.lastHeartbeatOK = c.clock.Now()

	if err := ensureDataDirs(cfg); err != nil {
		return nil, err
	}
	if cfg.DisableStateDB {
		c.db = state.NewMemDB()
	} else {
		db, err := state.Open(filepath.Join(cfg.StateDir(), "state.db"))
		if err != nil {
			return nil, err
		}
		c.db = db
	}
	c.setupDrivers()
	c.setupNetwork()
	infos := map[string]*structs.DriverInfo{}
	for name, d := range c.drivers {
		infos[name] = d.Fingerprint()
	}
	node, err := fingerprint.Fingerprint(cfg, infos)
	if err != nil {
		c.closeResources()
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	c.advertiseNetworkModes(node)
	c.node = node
	h := fnv.New64a()
	h.Write([]byte(node.ID))
	c.jit = newJitter(int64(h.Sum64()))

	if cfg.RPC != nil {
		c.rpc = cfg.RPC
	} else {
		router := allocsync.NewRouter(c.logger)
		c.allocNotices = router.Add(node.ID)
		c.pool = rpcx.NewConnPool(rpcx.PoolConfig{Logger: c.logger, TLS: cfg.RPCTLS, OnNotice: router.OnNotice})
		c.srv = servers.New(c.pool, cfg.Servers)
		c.rpc = c.srv
	}
	if cfg.ACLEnabled {
		c.tokens = newTokenCache(c.rpc, cfg.Region, c.clock, cfg.ACLTokenTTL, cfg.ACLPolicyTTL)
	}
	c.updates = newUpdater(c)
	c.services = servicereg.New(servicereg.Config{
		RPC: c.rpc, Allocs: c.Allocs, Node: c.Node, Region: cfg.Region, Clock: c.clock, Logger: c.logger,
		Seed: int64(h.Sum64()), ResyncInterval: cfg.ServiceResyncInterval,
	})
	c.gc = gc.New(gc.Config{
		Interval: cfg.GCInterval, MaxAllocs: cfg.GCMaxAllocs, DiskUsageThreshold: cfg.GCDiskUsageThreshold,
		InodeUsageThreshold: cfg.GCInodeUsageThreshold, AllocDirTTL: cfg.GCAllocDirTTL, Clock: c.clock,
		Logger: c.logger, Seed: int64(h.Sum64()), LiveAllocs: c.liveAllocs,
		DiskUsage: func() (float64, float64, error) {
			u, err := fingerprint.Disk(cfg.DataDir)
			return u.UsedPercent, u.InodesUsedPercent, err
		},
	})

	c.restore()
	c.goLoop(c.heartbeatLoop)
	c.goLoop(c.watchAllocs)
	c.goLoop(c.updates.run)
	c.goLoop(c.fenceLoop)
	c.goLoop(func() { c.gc.Run(c.ctx) })
	c.goLoop(func() { c.services.Run(c.ctx) })
	c.goLoop(c.runStats)
	if c.needsDriverHealth() {
		c.goLoop(c.driverHealthLoop)
	}
	c.logger.Info("client started", "node_id", node.ID, "data_dir", cfg.DataDir)
	return c, nil
}

func (c *Client) goLoop(f func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
}

// NodeID returns the node's ID.
func (c *Client) NodeID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.node.ID
}

// identity is what the client sends with every call it makes for itself:
// the servers act on a call only for the node whose secret it carries.
func (c *Client) identity() (nodeID, secretID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.node.ID, c.node.SecretID
}

// Node returns a copy of the node as registered.
func (c *Client) Node() *structs.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.node.Copy()
}

// Driver returns a loaded driver, or nil.
func (c *Client) Driver(name string) drivers.Driver { return c.drivers[name] }

// LastHeartbeat returns when the servers last acknowledged a heartbeat (or
// registration); until then, when the client started.
func (c *Client) LastHeartbeat() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastHeartbeatOK
}

// Allocs returns the client's view of every alloc it runs or keeps.
func (c *Client) Allocs() []*structs.Allocation {
	c.allocMu.RLock()
	defer c.allocMu.RUnlock()
	out := make([]*structs.Allocation, 0, len(c.allocs))
	for _, ar := range c.allocs {
		out = append(out, ar.Alloc())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (c *Client) runner(id string) *allocrunner.AllocRunner {
	c.allocMu.RLock()
	defer c.allocMu.RUnlock()
	return c.allocs[id]
}

// liveAllocs counts runners that are not yet garbage (for the GC's count
// limit, which covers live and terminal allocs together).
func (c *Client) liveAllocs() int {
	c.allocMu.RLock()
	defer c.allocMu.RUnlock()
	n := 0
	for _, ar := range c.allocs {
		if !ar.IsTerminal() {
			n++
		}
	}
	return n
}

// newRunner creates, registers and starts an alloc runner.
func (c *Client) newRunner(a *structs.Allocation, restore bool) *allocrunner.AllocRunner {
	cfg := allocrunner.Config{
		Alloc: a, Node: c.Node(), Region: c.cfg.Region, AllocDirBase: c.cfg.AllocDir(),
		Driver: c.Driver, StateDB: c.db, Clock: c.clock, Logger: c.logger, HostEnv: c.hostEnv,
		Users:          taskuser.ParsePolicy(c.cfg.Options),
		MaxKillTimeout: c.cfg.MaxKillTimeout, OnUpdate: c.allocChanged, Restore: restore,
		Artifacts: &c.cfg.Artifacts, Services: serviceCatalog{c},
		Metrics: c.cfg.Metrics,
	}
	if c.network != nil {
		cfg.Network = c.network
	}
	ar := allocrunner.New(cfg)
	c.allocMu.Lock()
	c.allocs[a.ID] = ar
	c.allocMu.Unlock()
	go ar.Run()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		select {
		case <-ar.Done():
		case <-c.ctx.Done():
			return
		}
		if ar.IsTerminal() {
			c.gc.Mark(a.ID, c.clock.Now(), func() error { return c.destroyRunner(ar) })
			// applyAssignment sets unassigned and then destroys what is
			// marked; marking before reading it here means one of the
			// two sees the other and the directory goes promptly.
			c.allocMu.RLock()
			gone := c.unassigned[a.ID]
			c.allocMu.RUnlock()
			if gone {
				c.gc.Destroy(a.ID, "collected by the servers")
			}
		}
	}()
	return ar
}

// allocChanged takes an alloc runner's report: to the servers, and to the
// service registrations, which follow the alloc's and its tasks' states.
func (c *Client) allocChanged(a *structs.Allocation) {
	c.updates.add(a)
	c.services.Kick()
}

// destroyRunner removes a terminal alloc's directory and forgets it.
func (c *Client) destroyRunner(ar *allocrunner.AllocRunner) error {
	err := ar.Destroy()
	c.allocMu.Lock()
	if c.allocs[ar.ID()] == ar {
		delete(c.allocs, ar.ID())
		delete(c.unassigned, ar.ID())
	}
	c.allocMu.Unlock()
	return err
}

// restore re-creates runners for the allocs in the state DB. Their tasks
// re-attach; nothing starts until the assignment confirms it.
func (c *Client) restore() {
	allocs, err := c.db.GetAllocs()
	if err != nil {
		c.logger.Error("some allocs could not be restored", "error", err)
	} else {
		c.reconcileNetworks(allocs)
	}
	for _, a := range allocs {
		c.logger.Info("restoring alloc", "alloc_id", a.ID)
		c.newRunner(a, true)
	}
}

// Shutdown stops the client's loops and runners and waits for them. Tasks
// keep running (to be re-attached by the next client) unless the config's
// StopTasksOnShutdown says otherwise.
func (c *Client) Shutdown() {
	c.shutdownOnce.Do(func() {
		c.allocMu.RLock()
		runners := make([]*allocrunner.AllocRunner, 0, len(c.allocs))
		for _, ar := range c.allocs {
			runners = append(runners, ar)
		}
		c.allocMu.RUnlock()
		if c.cfg.StopTasksOnShutdown {
			for _, ar := range runners {
				ar.Kill("client shutting down")
			}
			for _, ar := range runners {
				<-ar.Done()
			}
		}
		c.cancel()
		for _, ar := range runners {
			ar.Shutdown()
		}
		c.wg.Wait()
		c.closeResources()
		c.logger.Info("client stopped")
	})
}

func (c *Client) closeResources() {
	for _, f := range c.shutdowns {
		f()
	}
	if c.pool != nil {
		c.pool.Shutdown()
	}
	if c.db != nil {
		c.db.Close()
	}
}
