package agent

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/client"
	"github.com/drover-sched/drover/structs"
)

func TestAllocStatsInNomadsShape(t *testing.T) {
	var c usageConverter
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	sample := func(at time.Time, cpuSeconds float64) *client.AllocResourceUsage {
		return &client.AllocResourceUsage{
			ResourceUsage: client.ResourceUsage{MemoryRSS: 2048, CPUTotalSeconds: cpuSeconds, Pids: 1},
			Tasks: map[string]*client.TaskResourceUsage{
				"web": {ResourceUsage: client.ResourceUsage{MemoryRSS: 2048, CPUTotalSeconds: cpuSeconds, Pids: 1}, Timestamp: at},
			},
			Timestamp: at,
		}
	}

	// The first sample has memory but no CPU rate yet.
	first := c.convert("a1", sample(t0, 10), 2000)
	web := first.Tasks["web"]
	if first.Timestamp != t0.UnixNano() || web.Timestamp != t0.UnixNano() || web.ResourceUsage.MemoryStats.RSS != 2048 ||
		first.ResourceUsage.MemoryStats.RSS != 2048 || web.ResourceUsage.CpuStats == nil || len(web.ResourceUsage.CpuStats.Measured) != 0 {
		t.Fatalf("first sample: %+v %+v", first, web.ResourceUsage)
	}

	// Half a core over two seconds: 50%, 1000 MHz of a 2000 MHz core.
	second := c.convert("a1", sample(t0.Add(2*time.Second), 11), 2000)
	cpu := second.Tasks["web"].ResourceUsage.CpuStats
	if cpu.Percent != 50 || cpu.TotalTicks != 1000 || len(cpu.Measured) != 2 {
		t.Fatalf("second sample: %+v", cpu)
	}
	if all := second.ResourceUsage.CpuStats; all.Percent != 50 || all.TotalTicks != 1000 || len(all.Measured) != 2 {
		t.Fatalf("alloc total: %+v", all)
	}

	// Another alloc's task of the same name has its own history, and a
	// sample older than the TTL gives no rate.
	other := c.convert("a2", sample(t0.Add(2*time.Second), 99), 2000)
	if len(other.Tasks["web"].ResourceUsage.CpuStats.Measured) != 0 {
		t.Fatalf("other alloc: %+v", other.Tasks["web"].ResourceUsage.CpuStats)
	}
	late := c.convert("a1", sample(t0.Add(2*time.Second+cpuSampleTTL+time.Second), 12), 2000)
	if len(late.Tasks["web"].ResourceUsage.CpuStats.Measured) != 0 {
		t.Fatalf("sample after the TTL: %+v", late.Tasks["web"].ResourceUsage.CpuStats)
	}
}

func TestMHzPerCore(t *testing.T) {
	if got := mhzPerCore(structs.NewAttributes(map[string]string{"cpu.frequency": "2400"})); got != 2400 {
		t.Fatalf("frequency: %v", got)
	}
	if got := mhzPerCore(structs.NewAttributes(map[string]string{"cpu.totalcompute": "8000", "cpu.numcores": "4"})); got != 2000 {
		t.Fatalf("total / cores: %v", got)
	}
	if got := mhzPerCore(structs.Attributes{}); got != 0 {
		t.Fatalf("nothing known: %v", got)
	}
}
