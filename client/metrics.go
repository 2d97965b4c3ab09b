package client

import (
	"time"

	metrics "github.com/hashicorp/go-metrics"

	"github.com/drover-sched/drover/client/allocrunner"
	"github.com/drover-sched/drover/structs"
)

// The client's gauges carry Nomad's names and node labels. The
// allocations by state are emitted every StatsInterval; the host's
// resource use with publish_node_metrics, each task's memory with
// publish_allocation_metrics. The task runners count starts, restarts
// and ends themselves (taskrunner/metrics.go).

// nodeLabels are Nomad's labels of a client's gauges.
func (c *Client) nodeLabels() []metrics.Label {
	c.mu.Lock()
	defer c.mu.Unlock()
	return []metrics.Label{
		{Name: "node_id", Value: c.node.ID},
		{Name: "datacenter", Value: c.node.Datacenter},
		{Name: "node_class", Value: c.node.NodeClass},
		{Name: "node_pool", Value: c.node.NodePool},
	}
}

// emitStats sets the client's gauges once.
func (c *Client) emitStats() {
	m := c.cfg.Metrics
	labels := c.nodeLabels()
	c.allocMu.RLock()
	runners := make([]allocStatus, 0, len(c.allocs))
	for _, ar := range c.allocs {
		runners = append(runners, allocStatus{alloc: ar.Alloc(), tasks: ar})
	}
	c.allocMu.RUnlock()

	counts := map[string]int{"pending": 0, "running": 0, "terminal": 0}
	for _, r := range runners {
		switch {
		case r.alloc.ClientTerminalStatus():
			counts["terminal"]++
		case r.alloc.ClientStatus == structs.AllocClientStatusRunning:
			counts["running"]++
		default:
			counts["pending"]++
		}
	}
	for state, n := range counts {
		m.SetGaugeWithLabels([]string{"client", "allocations", state}, float32(n), labels)
	}
	if c.cfg.PublishNodeMetrics {
		c.emitHostStats(labels)
	}
	if c.cfg.PublishAllocationMetrics {
		for _, r := range runners {
			if r.alloc.ClientStatus != structs.AllocClientStatusRunning {
				continue
			}
			for task, u := range r.tasks.TaskStats() {
				m.SetGaugeWithLabels([]string{"client", "allocs", "memory", "rss"}, float32(u.MemoryRSS), []metrics.Label{
					{Name: "job", Value: r.alloc.JobID}, {Name: "task_group", Value: r.alloc.TaskGroup},
					{Name: "alloc_id", Value: r.alloc.ID}, {Name: "task", Value: task}, {Name: "namespace", Value: r.alloc.Namespace},
				})
			}
		}
	}
}

// allocStatus is one runner's alloc as the client sees it, and the runner
// to sample its tasks from.
type allocStatus struct {
	alloc *structs.Allocation
	tasks *allocrunner.AllocRunner
}

// emitHostStats sets Nomad's nomad.client.host.* gauges from one sample.
func (c *Client) emitHostStats(labels []metrics.Label) {
	s, err := c.HostStats()
	if err != nil {
		c.logger.Debug("sampling the host for metrics failed", "error", err)
		return
	}
	m := c.cfg.Metrics
	mem := map[string]uint64{"total": s.Memory.Total, "available": s.Memory.Available, "used": s.Memory.Used, "free": s.Memory.Free}
	for k, v := range mem {
		m.SetGaugeWithLabels([]string{"client", "host", "memory", k}, float32(v), labels)
	}
	for _, cpu := range s.CPU {
		l := append(append([]metrics.Label(nil), labels...), metrics.Label{Name: "cpu", Value: cpu.Name})
		m.SetGaugeWithLabels([]string{"client", "host", "cpu", "user"}, float32(cpu.User), l)
		m.SetGaugeWithLabels([]string{"client", "host", "cpu", "system"}, float32(cpu.System), l)
		m.SetGaugeWithLabels([]string{"client", "host", "cpu", "idle"}, float32(cpu.Idle), l)
		m.SetGaugeWithLabels([]string{"client", "host", "cpu", "total_percent"}, float32(100-cpu.Idle), l)
	}
	d := s.AllocDir
	l := append(append([]metrics.Label(nil), labels...), metrics.Label{Name: "disk", Value: d.Device})
	m.SetGaugeWithLabels([]string{"client", "host", "disk", "size"}, float32(d.Size), l)
	m.SetGaugeWithLabels([]string{"client", "host", "disk", "used"}, float32(d.Used), l)
	m.SetGaugeWithLabels([]string{"client", "host", "disk", "available"}, float32(d.Available), l)
	m.SetGaugeWithLabels([]string{"client", "host", "disk", "used_percent"}, float32(d.UsedPercent), l)
	m.SetGaugeWithLabels([]string{"client", "host", "disk", "inodes_percent"}, float32(d.InodesUsedPercent), l)
	m.SetGaugeWithLabels([]string{"client", "uptime"}, float32(s.Uptime), labels)
}

// runStats emits the gauges every StatsInterval until the client stops.
// It ticks in real time, not on the client's clock, like the server's
// (a test's fake clock must not find this loop's timer among its own).
func (c *Client) runStats() {
	tick := time.NewTicker(c.cfg.StatsInterval)
	defer tick.Stop()
	for {
		c.emitStats()
		select {
		case <-c.ctx.Done():
			return
		case <-tick.C:
		}
	}
}
