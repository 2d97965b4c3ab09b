package config

import "maps"

// Merge returns c overlaid with every field o sets, the rule for several
// -config files and for flags: later wins. A zero value in o means "not
// set" and keeps c's value, as in Nomad, so a later file cannot switch a
// boolean back off; lists are replaced as a whole, maps merged key by key,
// plugins replaced by name. Neither input is changed.
func (c *Config) Merge(o *Config) *Config {
	out := c.Copy()
	if o == nil {
		return out
	}
	setStr(&out.Name, o.Name)
	setStr(&out.Datacenter, o.Datacenter)
	setStr(&out.Region, o.Region)
	setStr(&out.DataDir, o.DataDir)
	setStr(&out.BindAddr, o.BindAddr)
	setStr(&out.LogLevel, o.LogLevel)
	out.LogJSON = out.LogJSON || o.LogJSON
	out.DevMode = out.DevMode || o.DevMode
	setStr(&out.Version, o.Version)

	setInt(&out.Ports.HTTP, o.Ports.HTTP)
	setInt(&out.Ports.RPC, o.Ports.RPC)
	setInt(&out.Ports.Serf, o.Ports.Serf)
	setStr(&out.Addresses.HTTP, o.Addresses.HTTP)
	setStr(&out.Addresses.RPC, o.Addresses.RPC)
	setStr(&out.Advertise.HTTP, o.Advertise.HTTP)
	setStr(&out.Advertise.RPC, o.Advertise.RPC)
	setStr(&out.Advertise.Serf, o.Advertise.Serf)

	out.Server = out.Server.merge(&o.Server)
	out.Client = out.Client.merge(&o.Client)
	out.TLS = mergeTLS(out.TLS, &o.TLS)
	out.ACL = out.ACL.merge(&o.ACL)
	out.Limits = out.Limits.merge(&o.Limits)
	out.Telemetry = mergeTelemetry(out.Telemetry, &o.Telemetry)

	for name, p := range o.Plugins {
		pc := *p
		pc.Config = copyAnyMap(p.Config)
		out.Plugins[name] = &pc
	}
	out.Files = append(out.Files, o.Files...)
	if o.ServerHook != nil {
		out.ServerHook = o.ServerHook
	}
	if o.ClientHook != nil {
		out.ClientHook = o.ClientHook
	}
	return out
}

func (s ServerConfig) merge(o *ServerConfig) ServerConfig {
	s.Enabled = s.Enabled || o.Enabled
	setInt(&s.BootstrapExpect, o.BootstrapExpect)
	s.ServerJoin = s.ServerJoin.merge(&o.ServerJoin)
	if o.NumSchedulers != nil {
		n := *o.NumSchedulers
		s.NumSchedulers = &n
	}
	setList(&s.EnabledSchedulers, o.EnabledSchedulers)
	setDur(&s.HeartbeatGrace, o.HeartbeatGrace)
	setDur(&s.MinHeartbeatTTL, o.MinHeartbeatTTL)
	if o.MaxHeartbeatsPerSecond != 0 {
		s.MaxHeartbeatsPerSecond = o.MaxHeartbeatsPerSecond
	}
	setDur(&s.FailoverHeartbeatTTL, o.FailoverHeartbeatTTL)
	setDur(&s.ReconnectReportWindow, o.ReconnectReportWindow)
	setDur(&s.EvalGCThreshold, o.EvalGCThreshold)
	setDur(&s.JobGCThreshold, o.JobGCThreshold)
	setDur(&s.NodeGCThreshold, o.NodeGCThreshold)
	setDur(&s.DeploymentGCThreshold, o.DeploymentGCThreshold)
	setDur(&s.BatchEvalGCThreshold, o.BatchEvalGCThreshold)
	setDur(&s.EvalGCInterval, o.EvalGCInterval)
	setDur(&s.JobGCInterval, o.JobGCInterval)
	setDur(&s.NodeGCInterval, o.NodeGCInterval)
	setDur(&s.DeploymentGCInterval, o.DeploymentGCInterval)
	// A later default_scheduler_config block replaces an earlier one
	// whole, as in Nomad.
	if o.DefaultSchedulerConfig != nil {
		s.DefaultSchedulerConfig = copySchedulerConfig(o.DefaultSchedulerConfig)
	}
	setDur(&s.JobMaxSourceSize, o.JobMaxSourceSize)
	setInt(&s.JobMaxCount, o.JobMaxCount)
	setInt(&s.JobMaxAllocs, o.JobMaxAllocs)
	setInt(&s.EventBufferSize, o.EventBufferSize) // Event stream (issue 15, events).
	setInt(&s.RaftMultiplier, o.RaftMultiplier)   // Raft timing (issue 16, raftmult).
	return s
}

func (c ClientConfig) merge(o *ClientConfig) ClientConfig {
	c.Enabled = c.Enabled || o.Enabled
	setList(&c.Servers, o.Servers)
	c.ServerJoin = c.ServerJoin.merge(&o.ServerJoin)
	setStr(&c.NodeClass, o.NodeClass)
	setStr(&c.NodePool, o.NodePool)
	c.Meta = mergeMap(c.Meta, o.Meta)
	setInt(&c.Reserved.CPU, o.Reserved.CPU)
	setInt(&c.Reserved.MemoryMB, o.Reserved.MemoryMB)
	setInt(&c.Reserved.DiskMB, o.Reserved.DiskMB)
	setStr(&c.Reserved.ReservedPorts, o.Reserved.ReservedPorts)
	setInt(&c.CPUTotalCompute, o.CPUTotalCompute)
	setInt(&c.MemoryTotalMB, o.MemoryTotalMB)
	setStr(&c.NetworkInterface, o.NetworkInterface)
	setDur(&c.GCInterval, o.GCInterval)
	setInt(&c.GCMaxAllocs, o.GCMaxAllocs)
	if o.GCDiskUsageThreshold != 0 {
		c.GCDiskUsageThreshold = o.GCDiskUsageThreshold
	}
	if o.GCInodeUsageThreshold != 0 {
		c.GCInodeUsageThreshold = o.GCInodeUsageThreshold
	}
	c.Options = mergeMap(c.Options, o.Options)
	setInt(&c.MinDynamicPort, o.MinDynamicPort)
	setInt(&c.MaxDynamicPort, o.MaxDynamicPort)
	c.Artifact = c.Artifact.merge(&o.Artifact)
	c.ChrootEnv = mergeMap(c.ChrootEnv, o.ChrootEnv)
	c.Network = c.Network.merge(o.Network)
	if len(c.HostVolumes)+len(o.HostVolumes) > 0 {
		c.HostVolumes = mergeMap(c.HostVolumes, o.HostVolumes)
	}
	if len(c.HostNetworks)+len(o.HostNetworks) > 0 {
		c.HostNetworks = mergeMap(c.HostNetworks, o.HostNetworks)
	}
	return c
}

func (j ServerJoin) merge(o *ServerJoin) ServerJoin {
	setList(&j.RetryJoin, o.RetryJoin)
	setDur(&j.RetryInterval, o.RetryInterval)
	setInt(&j.RetryMax, o.RetryMax)
	return j
}

func setStr(dst *string, v string) {
	if v != "" {
		*dst = v
	}
}

func setInt(dst *int, v int) {
	if v != 0 {
		*dst = v
	}
}

func setDur[D ~int64](dst *D, v D) {
	if v != 0 {
		*dst = v
	}
}

func setList(dst *[]string, v []string) {
	if len(v) > 0 {
		*dst = append([]string(nil), v...)
	}
}

// mergeMap overlays src on dst key by key: meta and options, and the
// host_volume and host_network blocks, which a later file replaces by name.
func mergeMap[V any](dst, src map[string]V) map[string]V {
	out := make(map[string]V, len(dst)+len(src))
	maps.Copy(out, dst)
	maps.Copy(out, src)
	return out
}
