package nomad

import (
	"context"
	"errors"
	"fmt"
	randv2 "math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"
	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/dirperm"
	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/helper/telemetry"
	"github.com/drover-sched/drover/nomad/broker"
	"github.com/drover-sched/drover/nomad/fsm"
	"github.com/drover-sched/drover/nomad/heartbeat"
	"github.com/drover-sched/drover/nomad/planner"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/nomad/stream"
	"github.com/drover-sched/drover/structs"
)

// Server is one Drover server: a raft member holding the replicated state,
// the RPC endpoints, and, while it is the leader, the leader-only loops.
//
// Ownership: NewServer starts the RPC accept loop, the leadership monitor
// and the join loop, each owned by the server's context and waited for in
// Shutdown. The leadership monitor owns the leader loops (leader.go): it
// starts them with a leader context when this server gains leadership and
// cancels and waits for them when it loses it.
type Server struct {
	config *Config
	logger hclog.Logger
	clock  clock.Clock
	// metrics is Config.Metrics, or a handle that drops everything.
	metrics *metrics.Metrics

	fsm           *fsm.FSM
	raft          *raft.Raft
	raftLayer     *rpcx.RaftLayer
	raftTransport *vettedTransport
	raftClosers   []func() error

	rpcServer *rpcx.Server
	listener  net.Listener
	advertise string
	connPool  *rpcx.ConnPool

	evalBroker   *broker.EvalBroker
	blockedEvals *broker.BlockedEvals
	planQueue    *planner.Queue
	// blockingLimits counts the blocking queries waiting on this server.
	blockingLimits *blockingLimiter
	heartbeats     *heartbeat.Heartbeater
	workers        []*Worker
	// periodicDispatcher launches periodic jobs' children while leading.
	periodicDispatcher *PeriodicDispatch
	// acls resolves ACL tokens and caches compiled ACLs (acl.go).
	acls *aclResolver
	// events keeps the recent events for the event stream; the FSM
	// publishes into it (event_endpoint.go).
	events *stream.Broker

	leaderMu     sync.Mutex
	leaderCancel context.CancelFunc
	// leaderReady is set once this server's FSM has applied every entry of
	// earlier terms (the leadership barrier). Until then it does not act as
	// leader: its state could still miss acknowledged writes.
	leaderReady atomic.Bool
	leaderWG    sync.WaitGroup
	// monitorWG holds the leadership monitor alone, so Shutdown can wait
	// for it before it revokes leadership: nothing can establish
	// leadership again afterwards.
	monitorWG sync.WaitGroup

	// joinLoopRunning says whether a joinLoop runs; guarded by
	// joinLoopMu (join.go).
	joinLoopMu      sync.Mutex
	joinLoopRunning bool

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// leaders ends forwarded requests whose leader was replaced.
	leaders *leaderWatch

	shutdownOnce sync.Once
	// raftStopped closes once raft has shut down: no apply future is
	// answered after it (raft_future.go).
	raftStopped chan struct{}

	// seed seeds the random sources of the server's components
	// (Config.Seed, or a random one).
	seed int64
	opts serverOptions

	// Blocking-query waits (server heap per node, issue 16).
	// queryDeadlines ends long blocking queries' waits, shared by the
	// waiters of each second (blocking_deadlines.go). A pointer: its
	// timers run for up to a wait's length after the server stops, and
	// must hold only it, not the server and its state.
	queryDeadlines *sharedDeadlines
	// queryWake ends blocking queries' waits when the state store is
	// replaced or the server stops (blocking_wake.go).
	queryWake storeWake

	// Alloc-change notices (server heap per node, issue 16).
	// allocNotices keeps the nodes registered by Node.WatchAllocs and
	// pushes their notices (alloc_notices.go).
	allocNotices *allocNotifier
}

// serverOptions replace parts of the server with twins; tests pass them
// to newServer. NewServer uses none.
type serverOptions struct {
	// wrapNodeStatusWriter, if set, wraps the heartbeater's StatusWriter
	// (the server), so a test can step in before a node's status change
	// is committed.
	wrapNodeStatusWriter func(heartbeat.StatusWriter) heartbeat.StatusWriter
	// wrapPeriodicClock, if set, wraps the clock the periodic dispatcher
	// is given, so a test can see the timer its loop waits on.
	wrapPeriodicClock func(clock.Clock) clock.Clock
}

// NewServer starts a server: it listens, sets up raft from the data dir (or
// memory), registers the endpoints, and starts the background loops.
func NewServer(cfg *Config) (*Server, error) {
	return newServer(cfg, serverOptions{})
}

func newServer(cfg *Config, opts serverOptions) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.New(&hclog.LoggerOptions{Name: "drover", Level: hclog.Info})
	}
	clk := clock.OrReal(cfg.Clock)
	ctx, cancel := context.WithCancel(context.Background())
	seed := cfg.Seed
	if seed == 0 {
		seed = randv2.Int64() // seeded by the runtime, not the clock
	}
	s := &Server{config: cfg, logger: logger, clock: clk, ctx: ctx, cancel: cancel, leaders: newLeaderWatch(), acls: newACLResolver(), seed: seed, opts: opts,
		queryDeadlines: new(sharedDeadlines), raftStopped: make(chan struct{})}
	s.metrics = telemetry.OrDiscard(cfg.Metrics)
	if err := s.setup(); err != nil {
		s.Shutdown()
		return nil, err
	}
	return s, nil
}

func (s *Server) setup() error {
	if err := s.setupIdentity(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.config.RPCAddr)
	if err != nil {
		return fmt.Errorf("server: listening on %s: %w", s.config.RPCAddr, err)
	}
	s.listener = ln
	s.advertise = s.config.RPCAdvertise
	if s.advertise == "" || strings.HasSuffix(s.advertise, ":0") {
		s.advertise = ln.Addr().String()
	}
	advAddr, err := net.ResolveTCPAddr("tcp", s.advertise)
	if err != nil {
		return fmt.Errorf("server: advertise address %q: %w", s.advertise, err)
	}
	s.raftLayer = rpcx.NewRaftLayer(advAddr, s.config.TLS.OutgoingRPC())
	s.blockingLimits = newBlockingLimiter(s.config.MaxBlockingQueries, s.config.MaxBlockingQueriesPerClient)
	opts := []rpcx.ServerOption{
		rpcx.WithRaftLayer(s.raftLayer),
		rpcx.WithHandshakeTimeout(s.config.RPCHandshakeTimeout),
		rpcx.WithMaxStreamsPerSession(s.config.RPCMaxStreamsPerSession),
		rpcx.WithMaxConnsPerClient(s.config.RPCMaxConnsPerClient),
		rpcx.WithMaxConns(s.config.RPCMaxConns),
		rpcx.WithCallObserver(s.observeRPC),
	}
	if s.config.TLS.RPCEnabled() {
		opts = append(opts, rpcx.WithTLS(s.config.TLS.IncomingRPC()), rpcx.WithConnAuthorizer(s.authorizeConn))
	}
	s.rpcServer = rpcx.NewServer(s.logger.Named("rpc"), opts...)
	s.connPool = rpcx.NewConnPool(rpcx.PoolConfig{Logger: s.logger.Named("pool"), TLS: s.config.TLS.OutgoingRPC()})

	if err := s.setupLeaderComponents(); err != nil {
		return err
	}
	if s.fsm, err = fsm.New(s.logger, &serverHooks{s}); err != nil {
		return err
	}
	s.events = stream.NewBroker(stream.Config{BufferEvents: s.config.EventBufferEvents, BufferBytes: s.config.EventBufferBytes})
	s.fsm.SetEventSink(s.events)
	s.setupAllocNotices()
	if err := s.setupEndpoints(); err != nil {
		return err
	}
	// Raft exists before the port answers anything: an early call from a
	// peer (a joining server asking who we are) must find it. Raft's own
	// connections wait in the listen backlog until Serve starts.
	if err := s.setupRaft(); err != nil {
		return err
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.rpcServer.Serve(s.ctx, ln); err != nil && !errors.Is(err, rpcx.ErrShutdown) {
			s.logger.Error("RPC server stopped", "error", err)
		}
	}()
	s.monitorWG.Add(1)
	go func() {
		defer s.monitorWG.Done()
		s.monitorLeadership()
	}()
	if len(s.config.ServerJoin) > 0 || s.config.BootstrapExpect > 1 {
		s.startJoinLoop()
	}
	s.startWorkers()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.runStats()
	}()
	s.logger.Info("server started", "name", s.config.NodeName, "id", s.config.NodeID, "rpc", s.advertise)
	return nil
}

// setupIdentity gives the server a stable raft ID: read from the data dir,
// or made once and written there.
func (s *Server) setupIdentity() error {
	if s.config.NodeID != "" {
		return nil
	}
	if s.config.DevMode || s.config.DataDir == "" {
		s.config.NodeID = structs.GenerateUUID()
		return nil
	}
	if err := dirperm.Ensure(s.config.DataDir, dirperm.Private); err != nil {
		return fmt.Errorf("server: data_dir: %w", err)
	}
	path := filepath.Join(s.config.DataDir, "node-id")
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		s.config.NodeID = strings.TrimSpace(string(b))
		return nil
	}
	s.config.NodeID = structs.GenerateUUID()
	if err := os.WriteFile(path, []byte(s.config.NodeID), 0o600); err != nil {
		return fmt.Errorf("server: writing node-id: %w", err)
	}
	return nil
}

// Shutdown stops every loop, raft and the RPC server, and waits for them.
//
// The order matters. Cancelling the server's context first aborts every
// RPC in flight (a worker's long poll on an unreachable leader would
// otherwise hold Shutdown for its whole timeout). Then the leadership
// monitor is waited for, so no establishLeadership can start loops after
// the revoke that follows; then the workers are waited for. raft's stores
// are closed last, once raft, its transport and every inbound raft
// connection handler have stopped (RaftLayer.DrainAccepted says why).
func (s *Server) Shutdown() error {
	var err error
	s.shutdownOnce.Do(func() {
		s.logger.Info("shutting down server")
		s.cancel()
		if s.events != nil {
			s.events.Shutdown()
		}
		s.monitorWG.Wait()
		s.revokeLeadership()
		s.stopWorkers()
		if s.raft != nil {
			if f := s.raft.Shutdown(); f.Error() != nil {
				err = f.Error()
			}
		}
		close(s.raftStopped)
		if s.raftTransport != nil {
			s.raftTransport.Close()
		}
		if s.raftLayer != nil && !s.raftLayer.DrainAccepted(raftTransportTimeout) {
			// Closing the stores below may then panic raft (see
			// DrainAccepted); waiting longer would hold shutdown forever.
			s.logger.Error("raft still handles a connection after shutdown; closing its stores anyway", "waited", raftTransportTimeout)
		}
		if s.rpcServer != nil {
			s.rpcServer.Shutdown()
		}
		if s.listener != nil {
			s.listener.Close()
		}
		s.wg.Wait()
		if s.connPool != nil {
			s.connPool.Shutdown()
		}
		for _, c := range s.raftClosers {
			c()
		}
	})
	return err
}

// State returns the current state store.
func (s *Server) State() *state.StateStore { return s.fsm.State() }

// RPCAddr returns the address clients and servers dial.
func (s *Server) RPCAddr() string { return s.advertise }

// NodeID returns the server's raft ID.
func (s *Server) NodeID() string { return s.config.NodeID }

// Config returns the configuration the server runs with.
func (s *Server) Config() *Config { return s.config }

// Logger returns the server's logger.
func (s *Server) Logger() hclog.Logger { return s.logger }

// Now returns the server clock's time.
func (s *Server) Now() time.Time { return s.clock.Now() }

// IsLeader reports whether this server is the raft leader and has caught
// up with every entry committed before its term.
func (s *Server) IsLeader() bool {
	return s.raft != nil && s.raft.State() == raft.Leader && s.leaderReady.Load()
}

// Leader returns the leader's RPC address and ID, empty if unknown.
func (s *Server) Leader() (string, string) {
	if s.raft == nil {
		return "", ""
	}
	addr, id := s.raft.LeaderWithID()
	return string(addr), string(id)
}

// Raft exposes the raft instance (tests, operator endpoints).
func (s *Server) Raft() *raft.Raft { return s.raft }
