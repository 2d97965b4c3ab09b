// Package telemetrytest gives tests a metrics handle they can read back:
// the components under test write to it as they would to an agent's, and
// the test asks what a metric holds by its full name
// ("nomad.nomad.plan.apply").
package telemetrytest

import (
	"time"

	metrics "github.com/hashicorp/go-metrics"

	"github.com/drover-sched/drover/helper/telemetry"
)

// Sink is an in-memory sink whose one aggregation interval lasts longer
// than any test, so nothing a test emits rolls out of sight.
type Sink struct{ *metrics.InmemSink }

// New returns a handle named as an agent's ("nomad." first, no host name
// in gauges) and the sink it writes to.
func New() (*metrics.Metrics, *Sink) {
	sink := &Sink{metrics.NewInmemSink(24*time.Hour, 24*time.Hour)}
	conf := metrics.DefaultConfig(telemetry.ServiceName)
	conf.EnableHostname = false
	conf.EnableRuntimeMetrics = false
	m, _ := metrics.New(conf, sink)
	return m, sink
}

func matches(name string, labels []metrics.Label, want string, with []string) bool {
	if name != want {
		return false
	}
	for i := 0; i+1 < len(with); i += 2 {
		found := false
		for _, l := range labels {
			if l.Name == with[i] && l.Value == with[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Counter sums the counter name over its label sets (only those carrying
// every name/value pair of with), as its count of increments and their
// sum.
func (s *Sink) Counter(name string, with ...string) (count int, sum float64) {
	for _, iv := range s.Data() {
		iv.RLock()
		for _, c := range iv.Counters {
			if matches(c.Name, c.Labels, name, with) {
				count += c.Count
				sum += c.Sum
			}
		}
		iv.RUnlock()
	}
	return count, sum
}

// Sample is the timer or sample name (over the label sets carrying with):
// how many values it took and the largest.
func (s *Sink) Sample(name string, with ...string) (count int, max float64) {
	for _, iv := range s.Data() {
		iv.RLock()
		for _, v := range iv.Samples {
			if matches(v.Name, v.Labels, name, with) {
				count += v.Count
				if v.Max > max {
					max = v.Max
				}
			}
		}
		iv.RUnlock()
	}
	return count, max
}

// Gauge is the gauge name's last value (of the label set carrying with),
// and whether it was ever set.
func (s *Sink) Gauge(name string, with ...string) (float32, bool) {
	var val float32
	var ok bool
	for _, iv := range s.Data() {
		iv.RLock()
		for _, g := range iv.Gauges {
			if matches(g.Name, g.Labels, name, with) {
				val, ok = g.Value, true
			}
		}
		iv.RUnlock()
	}
	return val, ok
}
