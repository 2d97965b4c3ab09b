package telemetry

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metrics "github.com/hashicorp/go-metrics"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func newTest(t *testing.T, cfg Config) *Telemetry {
	t.Helper()
	cfg.DisableHostname = true
	tel, err := New(cfg, "node-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tel.Shutdown)
	return tel
}

func TestValidateNamesTheKeyAndWhatIsExpected(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"a collection interval too short", Config{CollectionInterval: time.Millisecond}, "telemetry.collection_interval must be between 100ms and 1h0m0s, got 1ms"},
		{"retention shorter than the interval", Config{InMemoryCollectionInterval: time.Minute, InMemoryRetentionPeriod: time.Second}, "in_memory_retention_period (1s) must be at least in_memory_collection_interval (1m0s)"},
		{"too many intervals kept", Config{InMemoryCollectionInterval: time.Second, InMemoryRetentionPeriod: 2 * time.Hour}, "may hold at most 1000 intervals"},
		{"a filter without + or -", Config{PrefixFilter: []string{"nomad.raft"}}, `telemetry.prefix_filter[0]: "nomad.raft" must be a metric name prefix after + (allow) or - (block)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.WithDefaults().Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if _, err := New(tc.cfg, "n", nil); err == nil {
				t.Fatal("New accepted the configuration Validate refuses")
			}
		})
	}
	if err := (Config{}).WithDefaults().Validate(); err != nil {
		t.Fatalf("the defaults are refused: %v", err)
	}
}

func TestSummaryHasNomadsShapeAndNames(t *testing.T) {
	tel := newTest(t, Config{})
	m := tel.Metrics()
	m.SetGauge([]string{"nomad", "broker", "total_ready"}, 3)
	m.IncrCounterWithLabels([]string{"nomad", "rpc", "request"}, 1, []metrics.Label{{Name: "method", Value: "Job.Register"}})
	m.AddSample([]string{"nomad", "plan", "apply"}, 12)

	s, err := tel.Summary()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Gauges) == 0 || s.Timestamp == "" {
		t.Fatalf("summary without gauges or timestamp: %+v", s)
	}
	found := map[string]bool{}
	for _, g := range s.Gauges {
		found[g.Name] = true
		if g.Name == "nomad.nomad.broker.total_ready" && g.Value != 3 {
			t.Errorf("gauge value %v, want 3", g.Value)
		}
	}
	for _, c := range s.Counters {
		found[c.Name] = true
		if c.Name == "nomad.nomad.rpc.request" && c.DisplayLabels["method"] != "Job.Register" {
			t.Errorf("counter labels %v", c.DisplayLabels)
		}
	}
	for _, x := range s.Samples {
		found[x.Name] = true
	}
	for _, want := range []string{"nomad.nomad.broker.total_ready", "nomad.nomad.rpc.request", "nomad.nomad.plan.apply", "nomad.runtime.num_goroutines"} {
		if !found[want] {
			t.Errorf("%s missing from the summary", want)
		}
	}
}

func TestHostnameGoesInFrontOfGaugesUnlessDisabled(t *testing.T) {
	tel, err := New(Config{UseNodeName: true}, "node-7", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown()
	tel.Metrics().SetGauge([]string{"nomad", "heartbeat", "active"}, 1)
	s, _ := tel.Summary()
	if !hasGauge(s, "nomad.node-7.nomad.heartbeat.active") {
		t.Fatalf("use_node_name: gauge not named after the node: %v", gaugeNames(s))
	}
}

func TestPrefixFilterBlocksAndAllows(t *testing.T) {
	tel := newTest(t, Config{PrefixFilter: []string{"-nomad.raft", "+nomad.raft.apply"}})
	m := tel.Metrics()
	m.IncrCounter([]string{"raft", "apply"}, 1)
	m.IncrCounter([]string{"raft", "barrier"}, 1)
	s, _ := tel.Summary()
	names := map[string]bool{}
	for _, c := range s.Counters {
		names[c.Name] = true
	}
	if !names["nomad.raft.apply"] || names["nomad.raft.barrier"] {
		t.Fatalf("counters %v: want nomad.raft.apply kept and nomad.raft.barrier blocked", names)
	}
}

func TestPrometheusOutputParses(t *testing.T) {
	if h := newTest(t, Config{}).PrometheusHandler(); h != nil {
		t.Fatal("a Prometheus handler without prometheus_metrics")
	}
	tel := newTest(t, Config{PrometheusMetrics: true})
	m := tel.Metrics()
	m.SetGauge([]string{"nomad", "plan", "queue_depth"}, 2)
	m.IncrCounter([]string{"nomad", "rpc", "request_error"}, 1)
	m.AddSample([]string{"nomad", "plan", "evaluate"}, 4)

	rec := httptest.NewRecorder()
	tel.PrometheusHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/v1/metrics?format=prometheus", nil))
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatalf("the Prometheus text parser refuses the output: %v\n%s", err, rec.Body.String())
	}
	for name, want := range map[string]float64{"nomad_nomad_plan_queue_depth": 2, "nomad_nomad_rpc_request_error": 1} {
		f := families[name]
		if f == nil || len(f.Metric) != 1 {
			t.Fatalf("%s missing", name)
		}
		got := f.Metric[0].GetGauge().GetValue() + f.Metric[0].GetCounter().GetValue()
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if f := families["nomad_nomad_plan_evaluate"]; f == nil || f.Metric[0].GetSummary().GetSampleCount() != 1 {
		t.Errorf("nomad_nomad_plan_evaluate summary missing or without its sample")
	}
	if families["go_goroutines"] == nil {
		t.Error("the Go collector's metrics are missing")
	}
}

func TestAgentsInOneProcessDoNotShareMetrics(t *testing.T) {
	a, b := newTest(t, Config{}), newTest(t, Config{})
	a.Metrics().IncrCounter([]string{"nomad", "rpc", "request"}, 1)
	s, _ := b.Summary()
	for _, c := range s.Counters {
		if c.Name == "nomad.nomad.rpc.request" {
			t.Fatal("one agent's counter shows in another's metrics")
		}
	}
}

func TestRaftMetricsReachBridgedAgentsUntilShutdown(t *testing.T) {
	a, b := newTest(t, Config{}), newTest(t, Config{})
	a.BridgeRaft()
	// hashicorp/raft emits through armon/go-metrics' global handler.
	emitLikeRaft := func() {
		armonIncr([]string{"raft", "apply"})
	}
	emitLikeRaft()
	if !hasCounter(a, "nomad.raft.apply") {
		t.Fatal("a bridged agent does not see raft's counter")
	}
	if hasCounter(b, "nomad.raft.apply") {
		t.Fatal("an agent that did not ask for raft's metrics got them")
	}
	a.Shutdown()
	before := counterCount(a, "nomad.raft.apply")
	emitLikeRaft()
	if counterCount(a, "nomad.raft.apply") != before {
		t.Fatal("raft's metrics still reach an agent after its Shutdown")
	}
}

func hasGauge(s metrics.MetricsSummary, name string) bool {
	for _, g := range s.Gauges {
		if g.Name == name {
			return true
		}
	}
	return false
}

func gaugeNames(s metrics.MetricsSummary) []string {
	var out []string
	for _, g := range s.Gauges {
		out = append(out, g.Name)
	}
	return out
}

func hasCounter(tel *Telemetry, name string) bool { return counterCount(tel, name) > 0 }

// counterCount sums a counter over every retained interval.
func counterCount(tel *Telemetry, name string) int {
	n := 0
	for _, iv := range tel.Intervals() {
		iv.RLock()
		for _, c := range iv.Counters {
			if c.Name == name {
				n += c.Count
			}
		}
		iv.RUnlock()
	}
	return n
}
