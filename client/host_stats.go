package client

import (
	"strconv"

	"github.com/drover-sched/drover/client/hoststats"
)

// hostSampler samples this process's host. It is shared by every client
// in the process (tests run several): the kernel's CPU counters are the
// host's, so "use since the previous sample" means the same for all.
var hostSampler = hoststats.NewSampler("/proc")

// HostStats samples the host: memory, CPU per core, disks, uptime, and
// the CPU in use in MHz of the node's fingerprinted compute.
func (c *Client) HostStats() (*hoststats.Stats, error) {
	c.mu.Lock()
	totalMHz, _ := strconv.ParseFloat(c.node.Attributes.Value("cpu.totalcompute"), 64)
	c.mu.Unlock()
	return hostSampler.Sample(c.clock.Now(), c.cfg.AllocDir(), totalMHz)
}
