package agent

import (
	"strconv"
	"sync"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/client"
	"github.com/drover-sched/drover/structs"
)

// The client samples what a task uses as totals (resident memory, CPU
// seconds since start). GET /v1/client/allocation/:id/stats answers in
// Nomad's AllocResourceUsage shape, which Nomad's Go client and Drover's
// CLI decode: nested MemoryStats and CpuStats, timestamps in Unix
// nanoseconds. Nomad's CPU figures are rates (percent of one core, and
// TotalTicks, the MHz in use), so they are computed from the previous
// sample of the same task; the first sample of a task has no rate yet
// and reports 0 without listing them in Measured.

// cpuSampleTTL is how long a task's previous sample is kept: one older
// than this is dropped rather than used for a rate.
const cpuSampleTTL = 10 * time.Minute

type cpuSample struct {
	at      time.Time
	seconds float64
}

// usageConverter remembers each task's previous CPU sample.
type usageConverter struct {
	mu   sync.Mutex
	last map[string]cpuSample // by alloc ID + "/" + task
}

// convert turns a client sample into Nomad's shape. mhzPerCore converts a
// rate in cores to TotalTicks; 0 leaves TotalTicks unset.
func (c *usageConverter) convert(allocID string, u *client.AllocResourceUsage, mhzPerCore float64) *api.AllocResourceUsage {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[string]cpuSample{}
	}
	now := u.Timestamp
	for k, s := range c.last {
		if now.Sub(s.at) > cpuSampleTTL {
			delete(c.last, k)
		}
	}
	out := &api.AllocResourceUsage{
		ResourceUsage: &api.ResourceUsage{
			MemoryStats: &api.MemoryStats{RSS: u.ResourceUsage.MemoryRSS, Measured: []string{"RSS"}},
			CpuStats:    &api.CpuStats{Measured: []string{}},
		},
		Tasks:     make(map[string]*api.TaskResourceUsage, len(u.Tasks)),
		Timestamp: unixNano(u.Timestamp),
	}
	allRated := len(u.Tasks) > 0
	for name, t := range u.Tasks {
		cpu := &api.CpuStats{Measured: []string{}}
		key := allocID + "/" + name
		if prev, ok := c.last[key]; ok && t.Timestamp.After(prev.at) && t.CPUTotalSeconds >= prev.seconds {
			cores := (t.CPUTotalSeconds - prev.seconds) / t.Timestamp.Sub(prev.at).Seconds()
			cpu.Percent = cores * 100
			cpu.Measured = append(cpu.Measured, "Percent")
			if mhzPerCore > 0 {
				cpu.TotalTicks = cores * mhzPerCore
				cpu.Measured = append(cpu.Measured, "Total Ticks")
			}
			out.ResourceUsage.CpuStats.Percent += cpu.Percent
			out.ResourceUsage.CpuStats.TotalTicks += cpu.TotalTicks
		} else {
			allRated = false
		}
		if !t.Timestamp.IsZero() {
			c.last[key] = cpuSample{at: t.Timestamp, seconds: t.CPUTotalSeconds}
		}
		out.Tasks[name] = &api.TaskResourceUsage{
			ResourceUsage: &api.ResourceUsage{
				MemoryStats: &api.MemoryStats{RSS: t.MemoryRSS, Measured: []string{"RSS"}},
				CpuStats:    cpu,
			},
			Timestamp: unixNano(t.Timestamp),
		}
	}
	if allRated {
		out.ResourceUsage.CpuStats.Measured = out.Tasks[firstKey(u.Tasks)].ResourceUsage.CpuStats.Measured
	}
	return out
}

func firstKey[V any](m map[string]V) string {
	for k := range m {
		return k
	}
	return ""
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// mhzPerCore reads a core's speed from the node's fingerprint.
func mhzPerCore(attrs structs.Attributes) float64 {
	if f, err := strconv.ParseFloat(attrs.Value("cpu.frequency"), 64); err == nil && f > 0 {
		return f
	}
	total, err1 := strconv.ParseFloat(attrs.Value("cpu.totalcompute"), 64)
	cores, err2 := strconv.ParseFloat(attrs.Value("cpu.numcores"), 64)
	if err1 == nil && err2 == nil && cores > 0 {
		return total / cores
	}
	return 0
}
