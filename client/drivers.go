package client

import (
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/docker"
	"github.com/drover-sched/drover/client/drivers/exec"
	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/drivers/rawexec"
	"github.com/drover-sched/drover/client/taskuser"
)

// setupDrivers loads the drivers the config enables. raw_exec additionally
// needs its enable option, as in Nomad: it runs commands with the client's
// privileges.
func (c *Client) setupDrivers() {
	c.drivers = map[string]drivers.Driver{}
	for _, name := range c.cfg.EnabledDrivers {
		switch name {
		case rawexec.Name:
			d := rawexec.New(c.logger, c.clock, c.cfg.ReadBool(rawexec.EnableOption, false))
			c.drivers[name] = d
			c.shutdowns = append(c.shutdowns, d.Shutdown)
		case exec.Name:
			users := taskuser.ParsePolicy(c.cfg.Options)
			opts := exec.Options{Logger: c.logger, Clock: c.clock, Enabled: c.cfg.ReadBool("driver.exec.enable", true), ChrootEnv: c.cfg.ChrootEnv, Users: &users}
			// A plugin block the driver cannot read leaves it unhealthy,
			// saying why, rather than running tasks with other rules.
			opts.ConfigError = opts.PluginOptions(c.cfg.ExecPlugin)
			d := exec.New(opts)
			c.drivers[name] = d
			c.shutdowns = append(c.shutdowns, d.Shutdown)
		case docker.Name:
			pc, err := docker.ParsePluginConfig(c.cfg.PluginConfigs[docker.Name])
			if err != nil {
				// Refused before the agent starts by the config check;
				// here the driver still loads, with Nomad's defaults.
				c.logger.Error("docker plugin config refused; using defaults", "error", err)
			}
			d := docker.New(docker.Options{Logger: c.logger, Clock: c.clock, Config: pc, AllocLive: c.allocLive, NodeCPU: c.nodeCPU, NodeID: c.knownNodeID})
			c.drivers[name] = d
			c.shutdowns = append(c.shutdowns, d.Shutdown)
		case mock.Name, mock.Alias:
			if c.drivers[mock.Name] != nil {
				continue
			}
			// One mock instance answers to both names.
			d := mock.New(mock.Name, c.clock)
			c.drivers[mock.Name] = d
			c.drivers[mock.Alias] = d
			c.shutdowns = append(c.shutdowns, d.Shutdown)
		}
	}
}

// allocLive reports whether an alloc has a runner on this client that is
// not terminal: the docker reaper keeps such an alloc's containers.
func (c *Client) allocLive(allocID string) bool {
	c.allocMu.RLock()
	defer c.allocMu.RUnlock()
	ar, ok := c.allocs[allocID]
	return ok && !ar.IsTerminal()
}

// knownNodeID is the node's ID, or "" while the client is still building
// its node (drivers are loaded before the fingerprint).
func (c *Client) knownNodeID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.node == nil {
		return ""
	}
	return c.node.ID
}

// nodeCPU is the node's CPU capacity, for drivers that turn a task's MHz
// into a hard quota.
func (c *Client) nodeCPU() (int64, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.node == nil || c.node.NodeResources == nil {
		return 0, 0
	}
	return c.node.NodeResources.Cpu.CpuShares, int(c.node.NodeResources.Cpu.TotalCpuCores)
}
