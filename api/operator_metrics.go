package api

import (
	"fmt"
	"io"
	"net/http"
)

// MetricsSummary is an agent's metrics of its last finished aggregation
// interval (GET /v1/metrics), in Nomad's shape.
type MetricsSummary struct {
	Timestamp string
	Gauges    []GaugeValue
	Points    []PointValue
	Counters  []SampledValue
	Samples   []SampledValue
}

// GaugeValue is a gauge's last value.
type GaugeValue struct {
	Name   string
	Value  float32
	Labels map[string]string
}

// PointValue is a key's emitted values.
type PointValue struct {
	Name   string
	Points []float32
}

// SampledValue aggregates a counter's increments or a timer's samples
// (milliseconds) over the interval.
type SampledValue struct {
	Name   string
	Count  int
	Rate   float64
	Sum    float64
	Min    float64
	Max    float64
	Mean   float64
	Stddev float64
	Labels map[string]string
}

// maxMetricsBody bounds what Metrics reads: an agent's metrics are far
// smaller, and a misbehaving endpoint must not fill the caller's memory.
const maxMetricsBody = 64 << 20

// MetricsSummary reads the agent's metrics as JSON.
func (o *Operator) MetricsSummary(q *QueryOptions) (*MetricsSummary, error) {
	var out MetricsSummary
	if _, err := o.c.query("/v1/metrics", &out, q); err != nil {
		return nil, err
	}
	return &out, nil
}

// Metrics reads the agent's metrics as they are sent: JSON, or the
// Prometheus text format with q.Params["format"] = "prometheus".
func (o *Operator) Metrics(q *QueryOptions) ([]byte, error) {
	r := o.c.newRequest(http.MethodGet, "/v1/metrics")
	r.setQueryOptions(q)
	resp, cancel, _, err := o.c.do(r)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer resp.Body.Close()
	buf, err := io.ReadAll(io.LimitReader(resp.Body, maxMetricsBody+1))
	if err != nil {
		return nil, fmt.Errorf("reading /v1/metrics: %w", err)
	}
	if len(buf) > maxMetricsBody {
		return nil, fmt.Errorf("reading /v1/metrics: the answer is larger than %d bytes", maxMetricsBody)
	}
	return buf, nil
}
