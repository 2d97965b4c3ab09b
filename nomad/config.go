package nomad

import (
	"fmt"
	"runtime"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

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

	// Heartbeat tuning (see heartbeat.go).
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

	// Garbage collection thresholds (used by core GC).
	EvalGCThreshold       time.Duration
	JobGCThreshold        time.Duration
	NodeGCThreshold       time.Duration
	DeploymentGCThreshold time.Duration

	// DefaultSchedulerConfig is the scheduler configuration the first
	// leader of a new cluster stores (the agent's
	// server.default_scheduler_config block); nil means Nomad's defaults
	// (state.DefaultSchedulerConfig). Once a configuration is stored, the
	// operator API changes it and this is no longer read.
	DefaultSchedulerConfig *structs.SchedulerConfiguration

	// RaftConfig overrides raft's timing (tests use short timeouts).
	RaftConfig *raft.Config
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
	RPCMaxConnsPerClient    int
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

	Logger hclog.Logger
	Clock  Clock
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
		JobGCThreshold:              4 * time.Hour,
		NodeGCThreshold:             24 * time.Hour,
		DeploymentGCThreshold:       1 * time.Hour,
		RaftSnapshotThreshold:       8192,
		MaxBlockingQueries:          DefaultMaxBlockingQueries,
		MaxBlockingQueriesPerClient: DefaultMaxBlockingQueriesPerClient,
	}
}

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
	case c.MinHeartbeatTTL <= 0:
		return fmt.Errorf("server: min_heartbeat_ttl must be > 0")
	case c.MaxHeartbeatsPerSecond <= 0:
		return fmt.Errorf("server: max_heartbeats_per_second must be > 0")
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
