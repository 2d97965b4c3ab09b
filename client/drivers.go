package client

import (
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/exec"
	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/drivers/rawexec"
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
			opts := exec.Options{Logger: c.logger, Clock: c.clock, Enabled: c.cfg.ReadBool("driver.exec.enable", true), ChrootEnv: c.cfg.ChrootEnv}
			// A plugin block the driver cannot read leaves it unhealthy,
			// saying why, rather than running tasks with other rules.
			opts.ConfigError = opts.PluginOptions(c.cfg.ExecPlugin)
			d := exec.New(opts)
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
