package client

import (
	"time"

	"github.com/drover-sched/drover/client/drivers/docker"
	"github.com/drover-sched/drover/client/fingerprint"
	"github.com/drover-sched/drover/structs"
)

// driverHealthInterval is how often the client asks drivers whose health
// can change (docker: the daemon may stop or start) for their
// fingerprint again, as Nomad's driver fingerprint period.
const driverHealthInterval = 30 * time.Second

// driverHealthLoop re-fingerprints the drivers every driverHealthInterval
// and, when a driver's health or attributes changed, has the heartbeat
// loop register the node again so that the servers place (or stop
// placing) that driver's tasks here. It runs only on clients with a
// driver whose health depends on something outside the client.
func (c *Client) driverHealthLoop() {
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.clock.After(driverHealthInterval):
		}
		c.refreshDrivers()
	}
}

// refreshDrivers fingerprints the drivers and reports whether the node
// changed.
func (c *Client) refreshDrivers() bool {
	infos := make(map[string]*structs.DriverInfo, len(c.drivers))
	for name, d := range c.drivers {
		infos[name] = d.Fingerprint()
	}
	c.mu.Lock()
	changed := fingerprint.ApplyDrivers(c.node, infos)
	c.mu.Unlock()
	if changed {
		c.logger.Info("driver health changed; registering the node again")
		c.reregister.Store(true)
	}
	return changed
}

// needsDriverHealth reports whether a loaded driver's health can change
// while the client runs.
func (c *Client) needsDriverHealth() bool {
	return c.drivers[docker.Name] != nil
}
