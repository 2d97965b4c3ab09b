package telemetry

import (
	"sync"

	armon "github.com/armon/go-metrics"
	metrics "github.com/hashicorp/go-metrics"
)

// raftTargets are the agents' handles raft's metrics are forwarded to.
var raftTargets struct {
	once sync.Once
	mu   sync.RWMutex
	list []*metrics.Metrics
}

// bridgeRaft installs the forwarding sink as armon/go-metrics' global
// (once per process) and adds m to its targets. It returns the function
// that removes m again.
func bridgeRaft(m *metrics.Metrics) func() {
	raftTargets.once.Do(func() {
		conf := armon.DefaultConfig("") // the targets add "nomad"
		conf.EnableHostname = false     // the targets add their own
		conf.EnableRuntimeMetrics = false
		_, _ = armon.NewGlobal(conf, raftSink{})
	})
	raftTargets.mu.Lock()
	raftTargets.list = append(raftTargets.list, m)
	raftTargets.mu.Unlock()
	return func() {
		raftTargets.mu.Lock()
		defer raftTargets.mu.Unlock()
		for i, t := range raftTargets.list {
			if t == m {
				raftTargets.list = append(raftTargets.list[:i:i], raftTargets.list[i+1:]...)
				return
			}
		}
	}
}

// raftSink forwards what raft emits to every target, through the target's
// own handle, so its filters and host name apply.
type raftSink struct{}

func each(f func(m *metrics.Metrics)) {
	raftTargets.mu.RLock()
	defer raftTargets.mu.RUnlock()
	for _, m := range raftTargets.list {
		f(m)
	}
}

func labels(in []armon.Label) []metrics.Label {
	if len(in) == 0 {
		return nil
	}
	out := make([]metrics.Label, len(in))
	for i, l := range in {
		out[i] = metrics.Label{Name: l.Name, Value: l.Value}
	}
	return out
}

func (raftSink) SetGauge(key []string, val float32) {
	each(func(m *metrics.Metrics) { m.SetGauge(key, val) })
}

func (raftSink) SetGaugeWithLabels(key []string, val float32, l []armon.Label) {
	each(func(m *metrics.Metrics) { m.SetGaugeWithLabels(key, val, labels(l)) })
}

func (raftSink) EmitKey(key []string, val float32) {
	each(func(m *metrics.Metrics) { m.EmitKey(key, val) })
}

func (raftSink) IncrCounter(key []string, val float32) {
	each(func(m *metrics.Metrics) { m.IncrCounter(key, val) })
}

func (raftSink) IncrCounterWithLabels(key []string, val float32, l []armon.Label) {
	each(func(m *metrics.Metrics) { m.IncrCounterWithLabels(key, val, labels(l)) })
}

func (raftSink) AddSample(key []string, val float32) {
	each(func(m *metrics.Metrics) { m.AddSample(key, val) })
}

func (raftSink) AddSampleWithLabels(key []string, val float32, l []armon.Label) {
	each(func(m *metrics.Metrics) { m.AddSampleWithLabels(key, val, labels(l)) })
}
