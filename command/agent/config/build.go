package config

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"

	"github.com/hashicorp/go-hclog"

	clientconfig "github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/nomad"
)

// HTTPBind and RPCBind are the listen addresses.
func (c *Config) HTTPBind() string {
	return net.JoinHostPort(orStr(c.Addresses.HTTP, c.BindAddr), strconv.Itoa(c.Ports.HTTP))
}

func (c *Config) RPCBind() string {
	return net.JoinHostPort(orStr(c.Addresses.RPC, c.BindAddr), strconv.Itoa(c.Ports.RPC))
}

// AdvertiseAddr chooses the address others dial for a listener bound at
// bound (its real address, after a port 0 was resolved): the configured
// advertise address (with the real port added when it has none), else the
// bound address, with a wildcard host replaced by this machine's address.
func AdvertiseAddr(configured string, bound net.Addr, iface string) (string, error) {
	_, port, err := net.SplitHostPort(bound.String())
	if err != nil {
		return "", err
	}
	if configured != "" {
		if _, _, err := net.SplitHostPort(configured); err == nil {
			return configured, nil
		}
		return net.JoinHostPort(configured, port), nil
	}
	host, _, _ := net.SplitHostPort(bound.String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		addr, err := hostIP(iface)
		if err != nil {
			return "", err
		}
		host = addr
	}
	return net.JoinHostPort(host, port), nil
}

// hostIP returns the first IPv4 address of iface, or of any up,
// non-loopback interface when iface is empty.
func hostIP(iface string) (string, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	for _, i := range ifaces {
		if iface != "" && i.Name != iface {
			continue
		}
		if iface == "" && (i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0) {
			continue
		}
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
				return n.IP.String(), nil
			}
		}
	}
	if iface != "" {
		return "", fmt.Errorf("network interface %q has no IPv4 address", iface)
	}
	return "127.0.0.1", nil
}

// ForServer builds the server's configuration. dataDir is the agent's
// (already created) data directory.
func (c *Config) ForServer(dataDir string, logger hclog.Logger) (*nomad.Config, error) {
	s := nomad.DefaultConfig()
	s.NodeName = c.Name
	s.Region = c.Region
	s.Datacenter = c.Datacenter
	s.DevMode = c.DevMode
	s.DataDir = filepath.Join(dataDir, "server")
	s.RPCAddr = c.RPCBind()
	bindHost := orStr(c.Addresses.RPC, c.BindAddr)
	switch {
	case c.Advertise.RPC != "":
		if _, _, err := net.SplitHostPort(c.Advertise.RPC); err == nil {
			s.RPCAdvertise = c.Advertise.RPC
		} else {
			s.RPCAdvertise = net.JoinHostPort(c.Advertise.RPC, strconv.Itoa(c.Ports.RPC))
		}
	case net.ParseIP(bindHost) != nil && net.ParseIP(bindHost).IsUnspecified() && c.Ports.RPC != 0:
		// Raft and clients must be given an address they can dial, not
		// the wildcard the listener binds.
		ip, err := hostIP(c.Client.NetworkInterface)
		if err != nil {
			return nil, fmt.Errorf("agent: choosing the RPC advertise address: %w (set advertise.rpc)", err)
		}
		s.RPCAdvertise = net.JoinHostPort(ip, strconv.Itoa(c.Ports.RPC))
	}
	s.BootstrapExpect = c.Server.BootstrapExpect
	if c.DevMode && s.BootstrapExpect == 0 {
		s.BootstrapExpect = 1
	}
	s.ServerJoin = append([]string(nil), c.Server.ServerJoin.RetryJoin...)
	setDur(&s.RetryJoinInterval, c.Server.ServerJoin.RetryInterval)
	if c.Server.NumSchedulers != nil {
		s.NumSchedulers = *c.Server.NumSchedulers
	}
	if len(c.Server.EnabledSchedulers) > 0 {
		s.EnabledSchedulers = withCore(c.Server.EnabledSchedulers)
	}
	setDur(&s.HeartbeatGrace, c.Server.HeartbeatGrace)
	setDur(&s.MinHeartbeatTTL, c.Server.MinHeartbeatTTL)
	if c.Server.MaxHeartbeatsPerSecond > 0 {
		s.MaxHeartbeatsPerSecond = c.Server.MaxHeartbeatsPerSecond
	}
	setDur(&s.FailoverHeartbeatTTL, c.Server.FailoverHeartbeatTTL)
	setDur(&s.ReconnectReportWindow, c.Server.ReconnectReportWindow)
	setDur(&s.EvalGCThreshold, c.Server.EvalGCThreshold)
	setDur(&s.JobGCThreshold, c.Server.JobGCThreshold)
	setDur(&s.NodeGCThreshold, c.Server.NodeGCThreshold)
	setDur(&s.DeploymentGCThreshold, c.Server.DeploymentGCThreshold)
	setDur(&s.BatchEvalGCThreshold, c.Server.BatchEvalGCThreshold)
	setDur(&s.EvalGCInterval, c.Server.EvalGCInterval)
	setDur(&s.JobGCInterval, c.Server.JobGCInterval)
	setDur(&s.NodeGCInterval, c.Server.NodeGCInterval)
	setDur(&s.DeploymentGCInterval, c.Server.DeploymentGCInterval)
	s.DefaultSchedulerConfig = copySchedulerConfig(c.Server.DefaultSchedulerConfig)
	s.ACLEnabled = c.ACL.Enabled
	setDur(&s.ACLTokenMinExpirationTTL, c.ACL.TokenMinExpirationTTL)
	setDur(&s.ACLTokenMaxExpirationTTL, c.ACL.TokenMaxExpirationTTL)
	if c.Server.JobMaxSourceSize > 0 {
		s.JobMaxSourceSize = int(c.Server.JobMaxSourceSize)
	}
	setInt(&s.JobMaxCount, c.Server.JobMaxCount)
	setInt(&s.JobMaxAllocs, c.Server.JobMaxAllocs)
	setInt(&s.EventBufferEvents, c.Server.EventBufferSize) // Event stream (issue 15, events).
	setInt(&s.RaftMultiplier, c.Server.RaftMultiplier)     // Raft timing (issue 16, raftmult).
	// Carried for the RPC layer (rpc_*, blocking queries).
	setInt(&s.RPCMaxConnsPerClient, c.Limits.RPCMaxConnsPerClient)
	setInt(&s.RPCMaxConns, c.Limits.RPCMaxConns)
	setDur(&s.RPCHandshakeTimeout, c.Limits.RPCHandshakeTimeout)
	setInt(&s.RPCMaxStreamsPerSession, c.Limits.RPCMaxStreamsPerSession)
	setInt(&s.MaxBlockingQueries, c.Limits.MaxBlockingQueries)
	setInt(&s.MaxBlockingQueriesPerClient, c.Limits.MaxBlockingQueriesPerClient)
	s.Logger = logger
	return s, nil
}

// withCore makes sure the garbage collector's scheduler runs: Nomad adds
// it whatever the file lists.
func withCore(list []string) []string {
	out := append([]string(nil), list...)
	for _, s := range out {
		if s == "_core" {
			return out
		}
	}
	return append(out, "_core")
}

// ForClient builds the client's configuration. servers are the RPC
// addresses to register with (the local server's first when there is one),
// httpAdvertise the address recorded as the node's HTTPAddr, so that other
// agents can forward log and stats requests to it.
func (c *Config) ForClient(dataDir string, servers []string, httpAdvertise string, logger hclog.Logger) *clientconfig.Config {
	cc := &clientconfig.Config{
		DataDir:          filepath.Join(dataDir, "client"),
		Servers:          servers,
		Region:           c.Region,
		NodeName:         c.Name,
		Datacenter:       c.Datacenter,
		NodeClass:        c.Client.NodeClass,
		NodePool:         c.Client.NodePool,
		Meta:             copyMap(c.Client.Meta),
		CPUTotalCompute:  int64(c.Client.CPUTotalCompute),
		NetworkInterface: c.Client.NetworkInterface,
		LoopbackOnly:     c.DevMode || isLoopback(c.BindAddr),
		MinDynamicPort:   c.Client.MinDynamicPort,
		MaxDynamicPort:   c.Client.MaxDynamicPort,
		GCInterval:       c.Client.GCInterval,
		GCMaxAllocs:      c.Client.GCMaxAllocs,
		Options:          copyMap(c.Client.Options),
		BindAddr:         c.BindAddr,
		AdvertiseHTTP:    httpAdvertise,
		Logger:           logger,
		Version:          c.Version,
		// In dev mode nothing outlives the agent: tasks stop with it and
		// there is no state to re-attach to.
		StopTasksOnShutdown: c.DevMode,
		DisableStateDB:      c.DevMode,
		ACLEnabled:          c.ACL.Enabled,
		ACLTokenTTL:         c.ACL.TokenTTL,
		ACLPolicyTTL:        c.ACL.PolicyTTL,
	}
	cc.Reserved = clientconfig.Reserved{
		CPU:           int64(c.Client.Reserved.CPU),
		MemoryMB:      int64(c.Client.Reserved.MemoryMB),
		DiskMB:        int64(c.Client.Reserved.DiskMB),
		ReservedPorts: c.Client.Reserved.ReservedPorts,
	}
	cc.GCDiskUsageThreshold = c.Client.GCDiskUsageThreshold
	cc.GCInodeUsageThreshold = c.Client.GCInodeUsageThreshold
	cc.EnabledDrivers, cc.Options = c.drivers(cc.Options)
	cc.ChrootEnv = c.Client.ChrootEnv
	cc.Network = c.Client.Network.config()
	cc.HostVolumes = copyPtrMap(c.Client.HostVolumes)
	cc.HostNetworks = copyPtrMap(c.Client.HostNetworks)
	if p, ok := c.Plugins["exec"]; ok {
		cc.ExecPlugin = p.Config
	}
	if p, ok := c.Plugins["docker"]; ok {
		cc.PluginConfigs = map[string]map[string]any{"docker": p.Config}
	}
	// The agent adds its listeners (Sources.OwnAddrs) once it has them.
	cc.Artifacts = c.Client.Artifact.fetcher(nil)
	return cc
}

// drivers maps plugin blocks onto the client's driver list and options:
// exec and docker are always loaded (docker is healthy only where a
// daemon answers), raw_exec too but only runs tasks when enabled (by its
// plugin block or the legacy driver.raw_exec.enable option), and the mock
// driver only when a plugin block asks for it.
func (c *Config) drivers(options map[string]string) ([]string, map[string]string) {
	list := []string{"raw_exec", "exec", "docker"}
	if p, ok := c.Plugins["raw_exec"]; ok {
		if b, _ := p.Config["enabled"].(bool); b {
			options["driver.raw_exec.enable"] = "1"
		}
	}
	_, mock1 := c.Plugins["mock_driver"]
	_, mock2 := c.Plugins["mock"]
	if mock1 || mock2 {
		list = append(list, "mock")
	}
	return list, options
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func orStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
