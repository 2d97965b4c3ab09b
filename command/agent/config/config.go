package config

import (
	"os"
	"time"

	clientconfig "github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/helper/telemetry"
	"github.com/drover-sched/drover/helper/tlsutil"
	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/structs"
)

// Config is the agent's configuration in the shape of Nomad's agent
// configuration file: the same keys, nested the same way, so that an
// operator's Nomad agent file works unchanged for the parts Drover has.
//
// A zero field means "not set" while files and flags are merged (see
// Merge); after merging onto Default every field the agent reads has a
// value. Durations are already parsed; ports are plain numbers, where 0
// after merging means "pick a free port" (tests).
type Config struct {
	// Name is the node name, shared by the server and the client part.
	Name       string
	Datacenter string
	Region     string
	DataDir    string
	// BindAddr is the address every listener binds unless Addresses says
	// otherwise.
	BindAddr string
	LogLevel string
	LogJSON  bool

	Ports     Ports
	Addresses Addresses
	Advertise Advertise

	Server ServerConfig
	Client ClientConfig
	// TLS is the tls block (tls.go): mutual TLS on the RPC port,
	// HTTPS on the API, and the files that hold the certificates.
	TLS tlsutil.Config
	// ACL is the acl block (acl.go). It holds no references, so
	// Copy copies it with the struct.
	ACL ACLConfig
	// Limits is the limits {} block (limits.go).
	Limits Limits
	// Telemetry is the telemetry {} block (telemetry.go): what
	// /v1/metrics serves and how often gauges are emitted.
	Telemetry telemetry.Config

	// Plugins are the `plugin "name" { config { ... } }` blocks, by name.
	Plugins map[string]*PluginConfig

	// DevMode runs a single in-memory server and a client in one process
	// with data in a temporary directory (`drover agent -dev`).
	DevMode bool

	// Version is reported in the banner, /v1/agent/self and node attributes.
	// The command package sets it; it is not read from files.
	Version string

	// Files lists the configuration files that were loaded, in order.
	Files []string

	// ServerHook and ClientHook, when set, adjust the server's and the
	// client's configuration after it is built from this one: tests use
	// them for short timeouts, embedders for settings files do not have.
	ServerHook func(*nomad.Config)
	ClientHook func(*clientconfig.Config)
}

// Ports are the listener ports. Serf is accepted for compatibility and
// ignored: Drover servers find each other through raft and retry_join.
type Ports struct {
	HTTP int
	RPC  int
	Serf int
}

// Addresses override BindAddr per listener.
type Addresses struct {
	HTTP string
	RPC  string
}

// Advertise are the addresses other agents and clients should dial, when
// they differ from the bind addresses (NAT, containers).
type Advertise struct {
	HTTP string
	RPC  string
	Serf string
}

// ServerJoin says how an agent finds servers: addresses to dial, retried
// every RetryInterval, at most RetryMax times (0 = forever).
type ServerJoin struct {
	RetryJoin     []string
	RetryInterval time.Duration
	RetryMax      int
}

// ServerConfig is the `server` block.
type ServerConfig struct {
	Enabled         bool
	BootstrapExpect int
	ServerJoin      ServerJoin
	// NumSchedulers is a pointer because 0 is meaningful (a server that
	// schedules nothing) and differs from "not set" (one per core).
	NumSchedulers          *int
	EnabledSchedulers      []string
	HeartbeatGrace         time.Duration
	MinHeartbeatTTL        time.Duration
	MaxHeartbeatsPerSecond float64
	FailoverHeartbeatTTL   time.Duration
	// ReconnectReportWindow is nomad.Config.ReconnectReportWindow (a
	// Drover key; zero: the scheduler's default).
	ReconnectReportWindow time.Duration
	// The GC thresholds and intervals are nomad.Config's (zero: Nomad's
	// default).
	EvalGCThreshold       time.Duration
	BatchEvalGCThreshold  time.Duration
	JobGCThreshold        time.Duration
	NodeGCThreshold       time.Duration
	DeploymentGCThreshold time.Duration
	EvalGCInterval        time.Duration
	JobGCInterval         time.Duration
	NodeGCInterval        time.Duration
	DeploymentGCInterval  time.Duration
	// DefaultSchedulerConfig is the default_scheduler_config block: the
	// scheduler configuration a new cluster starts with. nil: not set.
	DefaultSchedulerConfig *structs.SchedulerConfiguration
	// JobMaxSourceSize (bytes), JobMaxCount and JobMaxAllocs bound the
	// jobs the server accepts (see nomad.Config). The HTTP API also
	// bounds job request bodies by JobMaxSourceSize.
	JobMaxSourceSize int64
	JobMaxCount      int
	JobMaxAllocs     int

	// Event stream (issue 15, events).
	// EventBufferSize bounds the events the server keeps for
	// /v1/event/stream (event_buffer_size); 0: not set.
	EventBufferSize int

	// Raft timing (issue 16, raftmult).
	// RaftMultiplier scales raft's heartbeat, election and leader lease
	// timeouts (raft_multiplier, 1 to 10); 0: not set.
	RaftMultiplier int
}

// ClientConfig is the `client` block.
type ClientConfig struct {
	Enabled bool
	// Servers are RPC addresses ("host:port") of servers to register with.
	Servers          []string
	ServerJoin       ServerJoin
	NodeClass        string
	NodePool         string
	Meta             map[string]string
	Reserved         Reserved
	CPUTotalCompute  int
	MemoryTotalMB    int
	NetworkInterface string
	GCInterval       time.Duration
	GCMaxAllocs      int
	// GC thresholds are percentages (0-100).
	GCDiskUsageThreshold  float64
	GCInodeUsageThreshold float64
	Options               map[string]string
	MinDynamicPort        int
	MaxDynamicPort        int
	// Artifact is the artifact {} block (artifact.go).
	Artifact ArtifactConfig
	// ChrootEnv is chroot_env: what of the host the exec driver maps into
	// each task's root (host path = path in the task). When set it
	// replaces the driver's default map, as in Nomad.
	ChrootEnv map[string]string
	// Network is cni_path, cni_config_dir and bridge_network_*
	// (network.go).
	Network ClientNetwork
	// HostVolumes and HostNetworks are the host_volume and host_network
	// blocks by name (host.go).
	HostVolumes  map[string]*structs.ClientHostVolumeConfig
	HostNetworks map[string]*structs.ClientHostNetworkConfig
}

// Reserved is the client `reserved` block: capacity kept away from
// allocations. ReservedPorts is a port spec such as "22,80,8000-8100".
type Reserved struct {
	CPU           int
	MemoryMB      int
	DiskMB        int
	ReservedPorts string
}

// PluginConfig is one `plugin "name"` block. Config is the plugin's own
// `config` block, kept as plain Go values.
type PluginConfig struct {
	Name   string
	Config map[string]any
}

// Default ports, as in Nomad.
const (
	defaultHTTPPort = 4646
	defaultRPCPort  = 4647
	defaultSerfPort = 4648
)

// Default returns the configuration files and flags are merged onto.
// Neither server nor client is enabled: an agent must ask for one.
func Default() *Config {
	name, _ := os.Hostname()
	if name == "" {
		name = "drover"
	}
	return &Config{
		Name:       name,
		Datacenter: "dc1",
		Region:     "global",
		BindAddr:   "0.0.0.0",
		LogLevel:   "INFO",
		Ports:      Ports{HTTP: defaultHTTPPort, RPC: defaultRPCPort, Serf: defaultSerfPort},
		Server: ServerConfig{
			ServerJoin:       ServerJoin{RetryInterval: 30 * time.Second},
			JobMaxSourceSize: nomad.DefaultJobMaxSourceSize,
			JobMaxCount:      nomad.DefaultJobMaxCount,
			JobMaxAllocs:     nomad.DefaultJobMaxAllocs,
		},
		Limits: defaultLimits(),
		Client: ClientConfig{
			ServerJoin: ServerJoin{RetryInterval: 30 * time.Second},
			Meta:       map[string]string{},
			Options:    map[string]string{},
		},
		Plugins: map[string]*PluginConfig{},
	}
}

// Dev returns the configuration of `drover agent -dev`: server and
// client in one process on the loopback interface, raft in memory, and the
// raw_exec and mock drivers enabled so any job can be tried at once.
func Dev() *Config {
	c := Default()
	c.DevMode = true
	c.BindAddr = "127.0.0.1"
	c.Server.Enabled = true
	c.Server.BootstrapExpect = 1
	c.Client.Enabled = true
	c.Plugins["raw_exec"] = &PluginConfig{Name: "raw_exec", Config: map[string]any{"enabled": true}}
	c.Plugins["mock_driver"] = &PluginConfig{Name: "mock_driver", Config: map[string]any{}}
	return c
}

// Copy returns a deep copy, so a reloaded configuration never aliases the
// running one.
func (c *Config) Copy() *Config {
	if c == nil {
		return nil
	}
	out := *c
	out.Files = append([]string(nil), c.Files...)
	out.Server.ServerJoin.RetryJoin = append([]string(nil), c.Server.ServerJoin.RetryJoin...)
	out.Server.EnabledSchedulers = append([]string(nil), c.Server.EnabledSchedulers...)
	if c.Server.NumSchedulers != nil {
		n := *c.Server.NumSchedulers
		out.Server.NumSchedulers = &n
	}
	out.Server.DefaultSchedulerConfig = copySchedulerConfig(c.Server.DefaultSchedulerConfig)
	out.Client.Servers = append([]string(nil), c.Client.Servers...)
	out.Client.ServerJoin.RetryJoin = append([]string(nil), c.Client.ServerJoin.RetryJoin...)
	out.Client.Meta = copyMap(c.Client.Meta)
	out.Client.Options = copyMap(c.Client.Options)
	out.Client.ChrootEnv = copyMap(c.Client.ChrootEnv)
	out.Client.HostVolumes = copyPtrMap(c.Client.HostVolumes)
	out.Client.HostNetworks = copyPtrMap(c.Client.HostNetworks)
	out.Client.Artifact = c.Client.Artifact.copy()
	out.Telemetry = copyTelemetry(c.Telemetry)
	out.Plugins = make(map[string]*PluginConfig, len(c.Plugins))
	for k, p := range c.Plugins {
		pc := *p
		pc.Config = copyAnyMap(p.Config)
		out.Plugins[k] = &pc
	}
	return &out
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// copyPtrMap copies a map of flat blocks (host volumes, host networks),
// each block too.
func copyPtrMap[V any](m map[string]*V) map[string]*V {
	if m == nil {
		return nil
	}
	out := make(map[string]*V, len(m))
	for k, v := range m {
		c := *v
		out[k] = &c
	}
	return out
}

// copyAnyMap deep-copies a plugin block's config (structs.CopyMapAny), so
// that a copy shares nothing with its original; a block always has a map.
func copyAnyMap(m map[string]any) map[string]any {
	if out := structs.CopyMapAny(m); out != nil {
		return out
	}
	return map[string]any{}
}
