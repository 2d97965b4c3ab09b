package nomad

import (
	"fmt"
	"runtime"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"
	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/helper/tlsutil"
	"github.com/drover-sched/drover/structs"
)

// Config is everything a server needs to start. The agent builds it from
// its HCL configuration and flags; tests build it directly.
type Config struct {
	// NodeName names this server; NodeID is its raft ID (persisted in the
	// data dir so a restarted server keeps its identity).
	NodeName   string
	NodeID     string
	Region     string
	Datacenter string

	// DataDir holds raft's log, stable store and snapshots. DevMode keeps
	// everything in memory instead.
	DataDir string
	DevMode bool

	// RPCAddr is the address to listen on for RPC and raft (one port);
	// RPCAdvertise is the address other servers and clients dial. Port 0
	// picks a free port (tests).
	RPCAddr      string
	RPCAdvertise string

	// BootstrapExpect is how many servers to wait for before bootstrapping
	// raft. 1 bootstraps alone.
	BootstrapExpect int
	// ServerJoin lists RPC addresses of other servers to join.
	ServerJoin []string
	// RetryJoinInterval is how often joining is retried.
	RetryJoinInterval time.Duration

	// NumSchedulers is how many scheduler workers run on this server.
	NumSchedulers     int
	EnabledSchedulers []string
	// ReconnectReportWindow is how long an unknown alloc on a node that is
	// ready again waits for its client's report before the scheduler marks
	// it lost (scheduler.Config.ReconnectReportWindow); zero means the
	// scheduler's default, 5 minutes.
	ReconnectReportWindow time.Duration

	// Heartbeat tuning (see nomad/heartbeat).
	MinHeartbeatTTL        time.Duration
	MaxHeartbeatsPerSecond float64
	HeartbeatGrace         time.Duration
	FailoverHeartbeatTTL   time.Duration
	// MaxNodeDownPerSecond bounds how fast nodes are marked down when many
	// miss their TTL at once (a network split on the server side), so it
	// does not become an eviction storm.
	MaxNodeDownPerSecond float64

	// Eval broker tuning.
	EvalNackTimeout             time.Duration
	EvalDeliveryLimit           int
	EvalNackInitialReenqueue    time.Duration
	EvalNackSubsequentReenqueue time.Duration
	EvalFailedFollowupDelay     time.Duration

	// Garbage collection: how long an object must have been terminal
	// before the leader's core GC collects it (the agent's
	// *_gc_threshold keys; BatchEvalGCThreshold is for the evals of batch
	// jobs, whose results users read later), and how often each kind is
	// collected (the *_gc_interval keys). Nomad's defaults.
	EvalGCThreshold       time.Duration
	BatchEvalGCThreshold  time.Duration
	JobGCThreshold        time.Duration
	NodeGCThreshold       time.Duration
	DeploymentGCThreshold time.Duration
	EvalGCInterval        time.Duration
	JobGCInterval         time.Duration
	NodeGCInterval        time.Duration
	DeploymentGCInterval  time.Duration

	// DefaultSchedulerConfig is the scheduler configuration the first
	// leader of a new cluster stores (the agent's
	// server.default_scheduler_config block); nil means Nomad's defaults
	// (state.DefaultSchedulerConfig). Once a configuration is stored, the
	// operator API changes it and this is no longer read.
	DefaultSchedulerConfig *structs.SchedulerConfiguration

	// ACLEnabled turns the ACL system on: the ACL endpoints answer, and
	// ResolveToken resolves tokens instead of allowing everything.
	ACLEnabled bool
	// ACLTokenMinExpirationTTL and ACLTokenMaxExpirationTTL bound the
	// lifetime a token may be created with (Nomad's defaults: 1m, 24h).
	ACLTokenMinExpirationTTL time.Duration
	ACLTokenMaxExpirationTTL time.Duration
	// JobMaxSourceSize bounds a job's encoded size in bytes (the agent's
	// server.job_max_source_size, Nomad's name). Register, plan,
	// dispatch, scale and revert check it before anything else, so no
	// job can make a raft entry, a plan or an answer too large for an
	// RPC message. See DefaultJobMaxSourceSize.
	JobMaxSourceSize int
	// JobMaxCount bounds one group's count (server.job_max_count) and
	// JobMaxAllocs the sum of a job's group counts (server.job_max_allocs):
	// the scheduler and the plan applier hold every placement of an
	// evaluation at once, and a stored job is scheduled again on every
	// start, so an unbounded count would exhaust the server for good.
	JobMaxCount  int
	JobMaxAllocs int

	// RaftConfig overrides raft's timing (tests use short timeouts).
	RaftConfig *raft.Config
	// RaftMultiplier scales raft's heartbeat, election and leader lease
	// timeouts (1 to MaxRaftMultiplier; 0 or 1: raft's own), for servers
	// on machines too slow or busy to answer within raft's defaults.
	RaftMultiplier int
	// RaftSnapshotThreshold and interval tune snapshotting.
	RaftSnapshotThreshold uint64

	// Limits on what callers may make the server hold (the agent's
	// limits block). Zero means the default.
	//
	// RPCMaxConnsPerClient bounds the RPC connections one client IP may
	// have open; RPCHandshakeTimeout bounds how long a new connection may
	// take to say what it carries (and, with TLS, to finish its
	// handshake); RPCMaxStreamsPerSession bounds the streams one
	// multiplexed session may have open.
	RPCMaxConnsPerClient int
	// RPCMaxConns bounds the RPC connections of every client together
	// (zero: rpcx.DefaultMaxConns, half the file descriptor limit).
	RPCMaxConns             int
	RPCHandshakeTimeout     time.Duration
	RPCMaxStreamsPerSession int
	// MaxBlockingQueries bounds the blocking queries waiting on this
	// server at once, and MaxBlockingQueriesPerClient those from one
	// client IP. A query past either limit is refused at once with
	// ErrTooManyBlockingQueries rather than queued.
	MaxBlockingQueries          int
	MaxBlockingQueriesPerClient int

	// TLS is the agent's TLS material and settings (the tls block); nil
	// or with tls.rpc off, the RPC port is plaintext. With tls.rpc every
	// connection to the RPC port, raft's included, must be TLS with a
	// certificate of the CA, and this server dials other servers with TLS.
	// With verify_server_hostname on, only server certificates may speak
	// raft and call server endpoints (see peer_auth.go). The agent shares
	// one Manager with its client and HTTP server, so a reload reaches all.
	TLS *tlsutil.Manager

	// Metrics is the agent's metrics handle (helper/telemetry); nil drops
	// them. StatsInterval is how often the server's gauges (the broker's
	// and plan queue's depths, heartbeat timers) are emitted: the
	// telemetry block's collection_interval, 1s if zero.
	Metrics       *metrics.Metrics
	StatsInterval time.Duration

	Logger hclog.Logger
	Clock  clock.Clock
	// Seed seeds the server's random choices outside raft (the heartbeat
	// TTL stagger), so a test can repeat them; 0 picks a random seed at
	// start.
	Seed int64

	// Node drainer (issue 14).
	// DrainerMinPassInterval bounds how often state changes start a pass
	// of the drainer (drainer.Config.MinPassInterval): changes that come
	// sooner are taken together. Zero means no bound (fake-clock tests).
	DrainerMinPassInterval time.Duration

	// Event stream (issue 15, events).
	// EventBufferEvents bounds the events this server keeps for event
	// stream subscribers; 0 means stream.DefaultBufferEvents.
	EventBufferEvents int
	// EventBufferBytes bounds their estimated memory (see
	// stream.Config.BufferBytes); 0 means stream.DefaultBufferBytes.
	EventBufferBytes int64
}

// DefaultConfig returns a configuration for a single in-memory dev server.
func DefaultConfig() *Config {
	return &Config{
		NodeName:                    "drover-server",
		Region:                      "global",
		Datacenter:                  "dc1",
		RPCAddr:                     "127.0.0.1:4647",
		BootstrapExpect:             1,
		RetryJoinInterval:           2 * time.Second,
		NumSchedulers:               runtime.NumCPU(),
		EnabledSchedulers:           []string{"service", "batch", "system", "sysbatch", "_core"},
		MinHeartbeatTTL:             10 * time.Second,
		MaxHeartbeatsPerSecond:      50,
		HeartbeatGrace:              10 * time.Second,
		FailoverHeartbeatTTL:        300 * time.Second,
		MaxNodeDownPerSecond:        20,
		EvalNackTimeout:             60 * time.Second,
		EvalDeliveryLimit:           3,
		EvalNackInitialReenqueue:    1 * time.Second,
		EvalNackSubsequentReenqueue: 20 * time.Second,
		EvalFailedFollowupDelay:     1 * time.Minute,
		EvalGCThreshold:             1 * time.Hour,
		BatchEvalGCThreshold:        24 * time.Hour,
		JobGCThreshold:              4 * time.Hour,
		NodeGCThreshold:             24 * time.Hour,
		DeploymentGCThreshold:       1 * time.Hour,
		EvalGCInterval:              5 * time.Minute,
		JobGCInterval:               5 * time.Minute,
		NodeGCInterval:              5 * time.Minute,
		DeploymentGCInterval:        5 * time.Minute,
		RaftSnapshotThreshold:       8192,
		ACLTokenMinExpirationTTL:    time.Minute,
		ACLTokenMaxExpirationTTL:    24 * time.Hour,
		JobMaxSourceSize:            DefaultJobMaxSourceSize,
		JobMaxCount:                 DefaultJobMaxCount,
		JobMaxAllocs:                DefaultJobMaxAllocs,
		MaxBlockingQueries:          DefaultMaxBlockingQueries,
		MaxBlockingQueriesPerClient: DefaultMaxBlockingQueriesPerClient,
		DrainerMinPassInterval:      DefaultDrainerMinPassInterval,
	}
}

// DefaultDrainerMinPassInterval lets the drainer pass at most ten times a
// second on state changes: a pass over a group of 10,000 allocs takes
// milliseconds, so a large drain costs the leader a small share of a core.
const DefaultDrainerMinPassInterval = 100 * time.Millisecond

// Defaults of the input bounds.
const (
	// DefaultJobMaxSourceSize is Nomad's default job_max_source_size,
	// "1M" (1,000,000 bytes).
	DefaultJobMaxSourceSize = 1_000_000
	// DefaultJobMaxCount and DefaultJobMaxAllocs keep one evaluation of
	// the largest job within what a server with a modest heap survives:
	// the scheduler holds about 5.5 KB per placement at its peak, and a
	// placement costs about 1.6 KB in a plan and a raft entry, so 20,000
	// placements peak near 110 MB in the scheduler and commit as a few
	// plan entries below the RPC message limit.
	DefaultJobMaxCount  = 10_000
	DefaultJobMaxAllocs = 20_000
	// DefaultRPCMaxConnsPerClient, DefaultRPCHandshakeTimeout are Nomad's
	// defaults for rpc_max_conns_per_client and rpc_handshake_timeout,
	// the agent's limits block's defaults (zero here means the RPC
	// layer's own default).
	DefaultRPCMaxConnsPerClient = 100
	DefaultRPCHandshakeTimeout  = 5 * time.Second
	// DefaultRPCMaxStreamsPerSession is yamux's stream bound per session
	// (rpcx.DefaultMaxStreamsPerSession).
	DefaultRPCMaxStreamsPerSession = rpcx.DefaultMaxStreamsPerSession
)

// Validate reports configuration problems by field.
func (c *Config) Validate() error {
	switch {
	case !c.DevMode && c.DataDir == "":
		return fmt.Errorf("server: data_dir is required unless running in dev mode")
	case c.BootstrapExpect < 0:
		return fmt.Errorf("server: bootstrap_expect must be >= 0, got %d", c.BootstrapExpect)
	case c.BootstrapExpect > 1 && c.DevMode:
		return fmt.Errorf("server: bootstrap_expect > 1 needs a data_dir (dev mode is single-server)")
	case c.NumSchedulers < 0:
		return fmt.Errorf("server: num_schedulers must be >= 0, got %d", c.NumSchedulers)
	case c.ReconnectReportWindow < 0:
		return fmt.Errorf("server: reconnect_report_window must be a positive duration such as \"5m\" (or unset for the default), got %s", c.ReconnectReportWindow)
	case c.EvalGCInterval <= 0 || c.JobGCInterval <= 0 || c.NodeGCInterval <= 0 || c.DeploymentGCInterval <= 0:
		return fmt.Errorf("server: eval_gc_interval, job_gc_interval, node_gc_interval and deployment_gc_interval must each be a positive duration such as \"5m\", got %s, %s, %s and %s",
			c.EvalGCInterval, c.JobGCInterval, c.NodeGCInterval, c.DeploymentGCInterval)
	case c.MinHeartbeatTTL <= 0:
		return fmt.Errorf("server: min_heartbeat_ttl must be > 0")
	case c.MaxHeartbeatsPerSecond <= 0:
		return fmt.Errorf("server: max_heartbeats_per_second must be > 0")
	case c.ACLTokenMinExpirationTTL < 0 || c.ACLTokenMaxExpirationTTL < c.ACLTokenMinExpirationTTL:
		return fmt.Errorf("acl: token_min_expiration_ttl (%s) must be >= 0 and at most token_max_expiration_ttl (%s)",
			c.ACLTokenMinExpirationTTL, c.ACLTokenMaxExpirationTTL)
	case c.JobMaxSourceSize < 1024 || c.JobMaxSourceSize > MaxJobMaxSourceSize:
		return fmt.Errorf("server: job_max_source_size must be between 1 KiB and %d bytes (a quarter of the RPC message limit, so a job with its request fits one message), got %d", MaxJobMaxSourceSize, c.JobMaxSourceSize)
	case c.JobMaxCount < 1:
		return fmt.Errorf("server: job_max_count must be at least 1, got %d", c.JobMaxCount)
	case c.JobMaxAllocs < c.JobMaxCount:
		return fmt.Errorf("server: job_max_allocs (%d) must be at least job_max_count (%d)", c.JobMaxAllocs, c.JobMaxCount)
	}
	if c.TLS.RPCEnabled() && c.TLS.Region() != c.Region {
		return fmt.Errorf("server: the TLS settings were made for region %q, the server is in %q", c.TLS.Region(), c.Region)
	}
	if c.DefaultSchedulerConfig != nil {
		if err := c.DefaultSchedulerConfig.Validate(); err != nil {
			return fmt.Errorf("server: default_scheduler_config: %w", err)
		}
	}
	return nil
}
