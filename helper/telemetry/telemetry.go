package telemetry

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"
	prommetrics "github.com/hashicorp/go-metrics/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ServiceName is the first element of every metric name, Nomad's.
const ServiceName = "nomad"

// prometheusExpiration is how long a metric that is no longer emitted
// stays in the Prometheus output (go-metrics' default), so the labels of
// stopped allocations do not pile up forever.
const prometheusExpiration = time.Minute

// Telemetry is one agent's metrics: the handle its components write to
// and the sinks /v1/metrics reads.
type Telemetry struct {
	cfg     Config
	metrics *metrics.Metrics
	inmem   *metrics.InmemSink
	prom    http.Handler // nil unless prometheus_metrics

	unbridge func() // stops forwarding raft's metrics; nil if not bridged

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// New builds an agent's metrics from cfg (after WithDefaults; it is
// validated here). nodeName names the gauges with use_node_name.
func New(cfg Config, nodeName string, logger hclog.Logger) (*Telemetry, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	t := &Telemetry{
		cfg:   cfg,
		inmem: metrics.NewInmemSink(cfg.InMemoryCollectionInterval, cfg.InMemoryRetentionPeriod),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	sinks := metrics.FanoutSink{t.inmem}
	if cfg.PrometheusMetrics {
		reg := prometheus.NewRegistry()
		// The Go and process collectors are what Prometheus users expect
		// next to an exporter's own metrics (Nomad serves them too).
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		sink, err := prommetrics.NewPrometheusSinkFrom(prommetrics.PrometheusOpts{
			Expiration: prometheusExpiration,
			Registerer: reg,
		})
		if err != nil {
			return nil, fmt.Errorf("telemetry: prometheus sink: %w", err)
		}
		sinks = append(sinks, sink)
		t.prom = promhttp.HandlerFor(reg, promhttp.HandlerOpts{
			ErrorLog:      logger.Named("prometheus").StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
			ErrorHandling: promhttp.ContinueOnError,
		})
	}
	m, err := metrics.New(metricsConfig(cfg, nodeName), sinks)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	t.metrics = m
	m.EmitRuntimeStats() // so the first /v1/metrics has them
	go t.runtimeLoop()
	return t, nil
}

// metricsConfig is go-metrics' configuration for cfg.
func metricsConfig(cfg Config, nodeName string) *metrics.Config {
	conf := metrics.DefaultConfig(ServiceName)
	// Runtime metrics come from runtimeLoop, which Shutdown stops.
	conf.EnableRuntimeMetrics = false
	conf.EnableHostname = !cfg.DisableHostname
	if cfg.UseNodeName && nodeName != "" {
		conf.HostName = nodeName
		conf.EnableHostname = true
	}
	conf.AllowedPrefixes, conf.BlockedPrefixes = cfg.filters()
	if cfg.FilterDefault != nil {
		conf.FilterDefault = *cfg.FilterDefault
	}
	return conf
}

func (t *Telemetry) runtimeLoop() {
	defer close(t.done)
	tick := time.NewTicker(t.cfg.CollectionInterval)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
			t.metrics.EmitRuntimeStats()
		}
	}
}

// Metrics is the handle the agent's components write to.
func (t *Telemetry) Metrics() *metrics.Metrics { return t.metrics }

// Config is the configuration the metrics were built with.
func (t *Telemetry) Config() Config { return t.cfg }

// Summary is /v1/metrics: the most recent finished aggregation interval
// (the current one while there is no other), in Nomad's JSON shape.
func (t *Telemetry) Summary() (metrics.MetricsSummary, error) {
	v, err := t.inmem.DisplayMetrics(nil, nil)
	if err != nil {
		return metrics.MetricsSummary{}, err
	}
	s, ok := v.(metrics.MetricsSummary)
	if !ok {
		return metrics.MetricsSummary{}, fmt.Errorf("telemetry: unexpected in-memory summary %T", v)
	}
	return s, nil
}

// Intervals are the in-memory sink's retained intervals, oldest first
// (for tests and tools that want more than the last one).
func (t *Telemetry) Intervals() []*metrics.IntervalMetrics { return t.inmem.Data() }

// PrometheusHandler serves the Prometheus text format; nil unless
// prometheus_metrics is on.
func (t *Telemetry) PrometheusHandler() http.Handler { return t.prom }

// BridgeRaft makes this agent's metrics receive hashicorp/raft's (see the
// package doc) until Shutdown.
func (t *Telemetry) BridgeRaft() {
	if t.unbridge == nil {
		t.unbridge = bridgeRaft(t.metrics)
	}
}

// Shutdown stops the runtime loop and the raft bridge. It is safe to call
// more than once.
func (t *Telemetry) Shutdown() {
	t.stopOnce.Do(func() {
		close(t.stop)
		<-t.done
		if t.unbridge != nil {
			t.unbridge()
		}
	})
}

var discard = func() *metrics.Metrics {
	conf := metrics.DefaultConfig(ServiceName)
	conf.EnableRuntimeMetrics = false
	conf.EnableHostname = false
	m, _ := metrics.New(conf, &metrics.BlackholeSink{})
	return m
}()

// Discard is a handle that drops everything, for components given none.
func Discard() *metrics.Metrics { return discard }

// OrDiscard is m, or Discard when m is nil.
func OrDiscard(m *metrics.Metrics) *metrics.Metrics {
	if m == nil {
		return discard
	}
	return m
}
