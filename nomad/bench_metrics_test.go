package nomad

import (
	"testing"
	"time"

	metrics "github.com/hashicorp/go-metrics"

	"github.com/drover-sched/drover/helper/telemetry"
	"github.com/drover-sched/drover/nomad/broker"
	"github.com/drover-sched/drover/nomad/planner"
	"github.com/drover-sched/drover/nomad/state/statetest"
)

// The cost of the metrics on two hot paths: the broker's
// enqueue/dequeue/ack (one timer per ack) and the in-memory plan applier
// (two timers and two counters per plan), each without metrics and with
// an agent's full set of sinks (in-memory and Prometheus), and one timer
// with labels by itself. Run the broker with a fixed -benchtime (such as
// 100000x): its cost per eval grows with the evals queued at once.
func BenchmarkMetricsOverhead(b *testing.B) {
	variants := []struct {
		name string
		m    func(b *testing.B) *metrics.Metrics
	}{
		{"off", func(*testing.B) *metrics.Metrics { return nil }},
		{"inmem+prometheus", func(b *testing.B) *metrics.Metrics {
			tel, err := telemetry.New(telemetry.Config{PrometheusMetrics: true}, "bench", nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(tel.Shutdown)
			return tel.Metrics()
		}},
	}
	for _, v := range variants {
		b.Run("broker/"+v.name, func(b *testing.B) {
			benchBrokerRoundTrips(b, broker.EvalBrokerConfig{NackTimeout: time.Minute, DeliveryLimit: 3, Metrics: v.m(b)})
		})
		b.Run("one-timer/"+v.name, func(b *testing.B) {
			m := telemetry.OrDiscard(v.m(b))
			e := testEval("web", 50, 1)
			start := time.Now()
			for i := 0; i < b.N; i++ {
				m.AddSampleWithLabels(broker.KeyProcessTime, float32(time.Since(start))/float32(time.Millisecond), broker.EvalLabels(e))
			}
		})
		b.Run("plan-applier/"+v.name, func(b *testing.B) {
			store := statetest.New(b)
			benchPlanApplier(b, store, &benchDirectDeps{store: store, index: 1000}, planner.Config{Workers: 2, GroupCommit: true, Metrics: v.m(b)})
		})
	}
}
