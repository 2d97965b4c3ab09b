package docker

import (
	"testing"
)

// BenchmarkStartTask starts containers through the driver, each a fresh
// attempt with its own directories and log FIFOs, as the task runner does.
// Compare with `docker run -d` of the same image and command.
func BenchmarkStartTask(b *testing.B) {
	d, cli := newTestDriver(b, nil)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		tt := newTestTask(b, cli, shell("sleep 300"))
		b.StartTimer()
		if _, err := d.StartTask(tt.cfg); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		b.Cleanup(func() { _ = d.DestroyTask(tt.cfg.ID, true) })
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/start")
}
