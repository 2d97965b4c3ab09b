package exec

import (
	"sort"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/rawexec"
	"github.com/drover-sched/drover/client/internal/testutil"
)

// startLatency starts one task printing at once and returns the time from
// StartTask to its first output. The task keeps running.
func startLatency(b *testing.B, d drivers.Driver, script string) (time.Duration, string) {
	cfg, stdout, _ := testTask(b, script)
	began := time.Now()
	if _, err := d.StartTask(cfg); err != nil {
		b.Fatal(err)
	}
	select {
	case <-stdout.first:
	case <-time.After(testutil.DefaultWait):
		b.Fatal("no output")
	}
	return time.Since(began), cfg.ID
}

func reportPercentiles(b *testing.B, took []time.Duration) {
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	at := func(p float64) float64 {
		return float64(took[min(len(took)-1, int(p*float64(len(took))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// BenchmarkStartToFirstOutput compares exec (init, namespaces, chroot,
// cgroups) with raw_exec (a plain process group): one task at a time,
// each run to its end before the next.
func BenchmarkStartToFirstOutput(b *testing.B) {
	needRoot(b)
	for _, tc := range []struct {
		name string
		new  func() drivers.Driver
	}{
		{"exec", func() drivers.Driver { return New(Options{Enabled: true}) }},
		{"raw_exec", func() drivers.Driver { return rawexec.New(nil, nil, true) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			d := tc.new()
			b.Cleanup(func() { d.(interface{ Shutdown() }).Shutdown() })
			var took []time.Duration
			for b.Loop() {
				cfg, stdout, _ := testTask(b, "echo ready")
				began := time.Now()
				if _, err := d.StartTask(cfg); err != nil {
					b.Fatal(err)
				}
				select {
				case <-stdout.first:
				case <-time.After(testutil.DefaultWait):
					b.Fatal("no output")
				}
				took = append(took, time.Since(began))
				waitExit(b, d, cfg.ID)
				if err := d.DestroyTask(cfg.ID, true); err != nil {
					b.Fatal(err)
				}
			}
			reportPercentiles(b, took)
		})
	}
}

// BenchmarkStartManyTasks starts tasks one after another while the
// earlier ones keep running, as a node filling up does.
func BenchmarkStartManyTasks(b *testing.B) {
	needRoot(b)
	const n = 20
	for _, tc := range []struct {
		name string
		new  func() drivers.Driver
	}{
		{"exec", func() drivers.Driver { return New(Options{Enabled: true}) }},
		{"raw_exec", func() drivers.Driver { return rawexec.New(nil, nil, true) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			d := tc.new()
			b.Cleanup(func() { d.(interface{ Shutdown() }).Shutdown() })
			var took []time.Duration
			for b.Loop() {
				ids := make([]string, 0, n)
				for range n {
					lat, id := startLatency(b, d, "echo ready; exec sleep 1000")
					took, ids = append(took, lat), append(ids, id)
				}
				for _, id := range ids {
					if err := d.DestroyTask(id, true); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportPercentiles(b, took)
		})
	}
}
