package config

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"

	"github.com/drover-sched/drover/client/artifact"
	"github.com/drover-sched/drover/client/network"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/telemetry"
	"github.com/drover-sched/drover/structs"
)

// RPCer is how the client talks to the servers. The real one tries the
// configured servers in turn over the rpcx pool; tests inject a fake that
// answers in-process.
type RPCer interface {
	RPC(ctx context.Context, method string, args, reply any) error
}

// Reserved is capacity the operator keeps away from allocations.
type Reserved struct {
	CPU      int64
	MemoryMB int64
	DiskMB   int64
	// ReservedPorts is a port spec such as "22,80,8000-8100".
	ReservedPorts string
}

// Config configures a Client. Zero fields take the defaults of
// DefaultConfig (applied by Canonicalize).
type Config struct {
	// DataDir holds the state database, the node identity and alloc dirs.
	DataDir string
	// Servers are RPC addresses ("host:port") tried in order.
	Servers []string
	// RPC, if set, is used instead of dialling Servers.
	RPC RPCer
	// RPCTLS, when set, makes the client dial servers over mutual TLS with
	// this config (the agent's tls block with rpc = true). Its callbacks
	// read the agent's current certificates, so a reload reaches new
	// connections. Nil means plaintext.
	RPCTLS *tls.Config

	Region     string
	NodeName   string
	Datacenter string
	NodeClass  string
	NodePool   string
	Meta       map[string]string
	Reserved   Reserved

	// CPUTotalCompute overrides the fingerprinted total MHz.
	CPUTotalCompute int64
	// NetworkInterface picks the interface whose address is advertised;
	// empty means the first non-loopback one. LoopbackOnly advertises
	// 127.0.0.1 (dev mode).
	NetworkInterface string
	LoopbackOnly     bool

	MinDynamicPort int
	MaxDynamicPort int

	// Network is the CNI configuration of group networks other than host
	// (cni_path, cni_config_dir, bridge_network_*); its StateDir is set
	// by the client.
	Network network.Config

	// GC settings; see package gc.
	GCInterval            time.Duration
	GCMaxAllocs           int
	GCDiskUsageThreshold  float64
	GCInodeUsageThreshold float64
	GCAllocDirTTL         time.Duration
	GCParallelDestroys    int

	// Options are free-form knobs, Nomad style: "driver.raw_exec.enable",
	// "env.denylist", "fingerprint.skip_disk".
	Options map[string]string
	// EnabledDrivers lists the drivers to load: raw_exec, exec, mock,
	// docker.
	EnabledDrivers []string
	// ChrootEnv is the exec driver's chroot_env (host path = path in the
	// task); empty means the driver's default.
	ChrootEnv map[string]string
	// HostVolumes are the client's host_volume blocks by name, and
	// HostNetworks its host_network blocks: the fingerprint puts both on
	// the node (NodeResources), with each network's address.
	HostVolumes  map[string]*structs.ClientHostVolumeConfig
	HostNetworks map[string]*structs.ClientHostNetworkConfig
	// ExecPlugin is the `plugin "exec" { config {} }` block (allow_caps,
	// pids_limit).
	ExecPlugin map[string]any
	// PluginConfigs are the agent's `plugin "<driver>" { config { ... } }`
	// blocks by driver name, for drivers whose options do not fit the flat
	// Options (docker's nested gc and volumes blocks).
	PluginConfigs map[string]map[string]any

	Logger hclog.Logger
	Clock  clock.Clock

	// MaxKillTimeout caps any task's kill_timeout.
	MaxKillTimeout time.Duration
	// UpdateInterval is how often alloc status changes are batched out.
	UpdateInterval time.Duration
	// BlockingQueryWait is the MaxQueryTime of Node.GetClientAllocs.
	BlockingQueryWait time.Duration
	// MaxBackoff caps the retry backoff when no server answers.
	MaxBackoff time.Duration
	// ServiceResyncInterval is how often the client sends all its native
	// service registrations again (0: servicereg.DefaultResyncInterval),
	// which repairs one a user deleted while its alloc runs.
	ServiceResyncInterval time.Duration

	// BindAddr and AdvertiseHTTP are recorded on the node (HTTPAddr).
	BindAddr      string
	AdvertiseHTTP string

	// StopTasksOnShutdown kills every task when the client shuts down
	// (dev mode); by default tasks keep running and are re-attached.
	StopTasksOnShutdown bool
	// DisableStateDB keeps client state in memory only (tests, dev).
	DisableStateDB bool
	// Version is advertised as nomad.version.
	Version string

	// Artifacts fetches tasks' artifacts: its bounds, and where they may
	// come from (the zero value is safe; see artifact.Sources).
	Artifacts artifact.Fetcher

	// ACLEnabled says the cluster enforces ACL tokens, so the client must
	// check the token of a request to its own endpoints (logs, file
	// system, alloc signals) with ACL.ResolveToken. A resolved token may
	// be cached for ACLTokenTTL and its policies for ACLPolicyTTL (the
	// agent's acl.token_ttl and acl.policy_ttl).
	ACLEnabled   bool
	ACLTokenTTL  time.Duration
	ACLPolicyTTL time.Duration

	// Metrics is the agent's metrics handle (helper/telemetry); nil
	// drops them. StatsInterval is how often the client's gauges are
	// emitted (the telemetry block's collection_interval; 1s if zero),
	// PublishAllocationMetrics and PublishNodeMetrics add the tasks' and
	// the host's resource usage to them.
	Metrics                  *metrics.Metrics
	StatsInterval            time.Duration
	PublishAllocationMetrics bool
	PublishNodeMetrics       bool
}

// Defaults.
const (
	DefaultGCInterval         = time.Minute
	DefaultGCMaxAllocs        = 50
	DefaultGCDiskThreshold    = 80
	DefaultGCInodeThreshold   = 70
	DefaultGCParallelDestroys = 2
	DefaultMaxKillTimeout     = 30 * time.Second
	DefaultUpdateInterval     = 200 * time.Millisecond
	DefaultBlockingQueryWait  = 5 * time.Minute
	DefaultMaxBackoff         = 30 * time.Second
	DefaultVersion            = "0.1.0"
	// DefaultACLTokenTTL and DefaultACLPolicyTTL are Nomad's defaults for
	// how long a client may cache a resolved token and its policies.
	DefaultACLTokenTTL  = 30 * time.Second
	DefaultACLPolicyTTL = 30 * time.Second
)

// DefaultConfig returns a config with every default filled in, running the
// exec and raw_exec drivers (raw_exec still needs its enable option).
func DefaultConfig() *Config {
	c := &Config{}
	c.Canonicalize()
	return c
}

// Canonicalize fills unset fields with defaults.
func (c *Config) Canonicalize() {
	if c.Region == "" {
		c.Region = structs.DefaultRegion
	}
	if c.Datacenter == "" {
		c.Datacenter = "dc1"
	}
	if c.NodePool == "" {
		c.NodePool = structs.DefaultNodePool
	}
	if c.MinDynamicPort == 0 {
		c.MinDynamicPort = structs.DefaultMinDynamicPort
	}
	if c.MaxDynamicPort == 0 {
		c.MaxDynamicPort = structs.DefaultMaxDynamicPort
	}
	if c.GCInterval == 0 {
		c.GCInterval = DefaultGCInterval
	}
	if c.GCMaxAllocs == 0 {
		c.GCMaxAllocs = DefaultGCMaxAllocs
	}
	if c.GCDiskUsageThreshold == 0 {
		c.GCDiskUsageThreshold = DefaultGCDiskThreshold
	}
	if c.GCInodeUsageThreshold == 0 {
		c.GCInodeUsageThreshold = DefaultGCInodeThreshold
	}
	if c.GCParallelDestroys == 0 {
		c.GCParallelDestroys = DefaultGCParallelDestroys
	}
	if c.MaxKillTimeout == 0 {
		c.MaxKillTimeout = DefaultMaxKillTimeout
	}
	if c.UpdateInterval == 0 {
		c.UpdateInterval = DefaultUpdateInterval
	}
	if c.BlockingQueryWait == 0 {
		c.BlockingQueryWait = DefaultBlockingQueryWait
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.EnabledDrivers == nil {
		c.EnabledDrivers = []string{"raw_exec", "exec"}
	}
	if c.Options == nil {
		c.Options = map[string]string{}
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.Clock == nil {
		c.Clock = clock.Real()
	}
	if c.Version == "" {
		c.Version = DefaultVersion
	}
	if c.ACLTokenTTL == 0 {
		c.ACLTokenTTL = DefaultACLTokenTTL
	}
	if c.ACLPolicyTTL == 0 {
		c.ACLPolicyTTL = DefaultACLPolicyTTL
	}
	if c.StatsInterval <= 0 {
		c.StatsInterval = telemetry.DefaultCollectionInterval
	}
	c.Metrics = telemetry.OrDiscard(c.Metrics)
}

// Validate names every problem with the config.
func (c *Config) Validate() error {
	var errs []error
	if c.DataDir == "" {
		errs = append(errs, errors.New("client: data_dir is required"))
	} else if !filepath.IsAbs(c.DataDir) {
		errs = append(errs, fmt.Errorf("client: data_dir %q must be an absolute path", c.DataDir))
	}
	if c.RPC == nil && len(c.Servers) == 0 {
		errs = append(errs, errors.New("client: servers is empty (list at least one server address)"))
	}
	if c.MinDynamicPort < 1 || c.MaxDynamicPort > 65535 || c.MinDynamicPort > c.MaxDynamicPort {
		errs = append(errs, fmt.Errorf("client: dynamic port range %d-%d is invalid", c.MinDynamicPort, c.MaxDynamicPort))
	}
	if c.Reserved.ReservedPorts != "" {
		if _, err := structs.ParsePortRanges(c.Reserved.ReservedPorts); err != nil {
			errs = append(errs, fmt.Errorf("client: reserved ports: %w", err))
		}
	}
	if c.GCDiskUsageThreshold < 0 || c.GCDiskUsageThreshold > 100 {
		errs = append(errs, fmt.Errorf("client: gc_disk_usage_threshold %v must be between 0 and 100", c.GCDiskUsageThreshold))
	}
	for _, d := range c.EnabledDrivers {
		switch d {
		case "raw_exec", "exec", "mock", "mock_driver", "docker":
		default:
			errs = append(errs, fmt.Errorf("client: unknown driver %q (known: raw_exec, exec, mock, docker)", d))
		}
	}
	return errors.Join(errs...)
}

// ReadBool returns a boolean option, or def when unset or unparsable.
func (c *Config) ReadBool(key string, def bool) bool {
	v, ok := c.Options[key]
	if !ok {
		return def
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return def
	}
	return b
}

// ReadList returns a comma-separated option as a list.
func (c *Config) ReadList(key string) []string {
	return structs.SplitList(c.Options[key])
}

// DriverEnabled reports whether a driver is in EnabledDrivers.
func (c *Config) DriverEnabled(name string) bool {
	for _, d := range c.EnabledDrivers {
		if d == name {
			return true
		}
	}
	return false
}

// AllocDir is where alloc directories live.
func (c *Config) AllocDir() string { return filepath.Join(c.DataDir, "alloc") }

// StateDir is where the state database and node identity live.
func (c *Config) StateDir() string { return filepath.Join(c.DataDir, "client") }
