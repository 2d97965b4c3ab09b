package client

import (
	"reflect"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/docker"
	"github.com/drover-sched/drover/client/fingerprint"
	"github.com/drover-sched/drover/structs"
)

// driverHealthInterval is how often the client asks drivers whose health
// can change (docker: the daemon may stop or start) for their
// fingerprint again while they are healthy, as Nomad's driver fingerprint
// period.
const driverHealthInterval = 30 * time.Second

// driverRetryFirst is the first wait before an unhealthy driver is asked
// again; each further failure doubles it, up to driverHealthInterval. A
// daemon that comes back is seen within about its own start time, not a
// whole period later.
const driverRetryFirst = time.Second

// driverHealthLoop re-fingerprints the drivers every driverHealthInterval,
// sooner while one is unhealthy (driverRetryFirst, doubling) and at once
// when a driver notices its health may have changed (HealthNotifier: the
// docker driver's calls to a daemon that went away fail). When a driver's
// health or attributes changed, it has the heartbeat loop register the
// node again so that the servers place (or stop placing) that driver's
// tasks here. It runs only on clients with a driver whose health depends
// on something outside the client.
func (c *Client) driverHealthLoop() {
	cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c.ctx.Done())}}
	for _, d := range c.drivers {
		if n, ok := d.(drivers.HealthNotifier); ok {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(n.HealthMayHaveChanged())})
		}
	}
	var retry time.Duration
	for {
		wait := driverHealthInterval
		if retry > 0 {
			wait = retry
		}
		timer := c.clock.After(wait)
		chosen, _, _ := reflect.Select(append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(timer)}))
		if chosen == 0 {
			return
		}
		c.refreshDrivers()
		retry = nextDriverRetry(retry, c.driversHealthy())
	}
}

// nextDriverRetry is the wait before the next fingerprint while a driver
// is unhealthy: driverRetryFirst after a healthy check, then doubled up to
// driverHealthInterval. It is 0 (the plain period) once all are healthy.
func nextDriverRetry(last time.Duration, healthy bool) time.Duration {
	switch {
	case healthy:
		return 0
	case last == 0:
		return driverRetryFirst
	default:
		return min(2*last, driverHealthInterval)
	}
}

// driversHealthy reports whether every detected driver is healthy.
func (c *Client) driversHealthy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, info := range c.node.Drivers {
		if info != nil && info.Detected && !info.Healthy {
			return false
		}
	}
	return true
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
