package broker

import (
	"time"

	metrics "github.com/hashicorp/go-metrics"

	"github.com/drover-sched/drover/structs"
)

// KeyProcessTime is an eval's time from dequeue to ack, on the broker's
// clock.
var KeyProcessTime = []string{"nomad", "broker", "process_time"}

// ms is d as go-metrics' timers record it: float milliseconds.
func ms(d time.Duration) float32 { return float32(d) / float32(time.Millisecond) }

// EvalLabels describe an evaluation in the broker's timers. Nomad's also
// name the job; Drover's do not, because every label set is a series each
// sink keeps (a Prometheus summary is kilobytes): one per job would let
// whoever may submit jobs grow the server's memory with job names, and
// cost every ack a new series (BenchmarkMetricsOverhead).
func EvalLabels(e *structs.Evaluation) []metrics.Label {
	return []metrics.Label{
		{Name: "namespace", Value: e.Namespace},
		{Name: "eval_type", Value: e.Type},
		{Name: "triggered_by", Value: e.TriggeredBy},
	}
}
