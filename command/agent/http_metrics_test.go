package agent

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/drover-sched/drover/command/agent/config"
)

// Nomad's Go client reads /v1/metrics in its own MetricsSummary shape,
// and the names are Nomad's: a dev agent that has registered its node has
// served heartbeats and raft commits.
func TestMetricsThroughNomadsClient(t *testing.T) {
	// /v1/metrics shows the last finished interval once a second one has
	// begun, and intervals start at wall-clock multiples of their length:
	// an agent that started just before a boundary and committed just
	// after it shows an interval from before its commits. With hour-long
	// intervals, an attempt that saw a boundary pass is made again, right
	// after that boundary.
	var a *TestAgent
	var c *nomadapi.Client
	var summary *nomadapi.MetricsSummary
	for attempt := 0; ; attempt++ {
		hour := time.Now().Truncate(time.Hour)
		a = NewTestAgent(t, func(c *config.Config) {
			c.Telemetry.DisableHostname = true
			c.Telemetry.InMemoryCollectionInterval = time.Hour
			c.Telemetry.InMemoryRetentionPeriod = time.Hour
		})
		var err error
		if c, err = nomadapi.NewClient(&nomadapi.Config{Address: a.URL}); err != nil {
			t.Fatal(err)
		}
		if summary, _, err = c.Operator().MetricsSummary(nil); err != nil {
			t.Fatal(err)
		}
		if time.Now().Truncate(time.Hour).Equal(hour) || attempt > 0 {
			break
		}
	}
	if summary.Timestamp == "" || len(summary.Gauges) == 0 || len(summary.Samples) == 0 {
		t.Fatalf("summary lacks its parts: %+v", summary)
	}
	names := map[string]bool{}
	for _, g := range summary.Gauges {
		names[g.Name] = true
	}
	for _, s := range summary.Samples {
		names[s.Name] = true
	}
	for _, c := range summary.Counters {
		names[c.Name] = true
	}
	for _, want := range []string{"nomad.runtime.num_goroutines", "nomad.raft.commitTime", "nomad.nomad.broker.total_ready", "nomad.nomad.plan.queue_depth", "nomad.nomad.rpc.request"} {
		if !names[want] {
			t.Errorf("%s missing from /v1/metrics", want)
		}
	}

	_, err := c.Operator().Metrics(&nomadapi.QueryOptions{Params: map[string]string{"format": "prometheus"}})
	requireAPIError(t, err, http.StatusUnsupportedMediaType, "Prometheus is not enabled")
	resp, body := callAs(t, "", "GET", a.URL+"/v1/metrics?format=xml", nil)
	if resp.StatusCode != 400 || !bytes.Contains(body, []byte(`format "xml" is not a metrics format`)) {
		t.Fatalf("unknown format: %d %s", resp.StatusCode, body)
	}
}

func TestMetricsInPrometheusFormatParse(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) {
		c.Telemetry.PrometheusMetrics = true
		c.Telemetry.DisableHostname = true
	})
	c, err := nomadapi.NewClient(&nomadapi.Config{Address: a.URL})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Operator().Metrics(&nomadapi.QueryOptions{Params: map[string]string{"format": "prometheus"}})
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("the Prometheus text parser refuses /v1/metrics?format=prometheus: %v", err)
	}
	for _, want := range []string{"nomad_raft_commitTime", "nomad_nomad_rpc_request", "nomad_runtime_num_goroutines"} {
		if families[want] == nil {
			t.Errorf("%s missing from the Prometheus output", want)
		}
	}
}

func TestMetricsNeedAgentReadWithACLs(t *testing.T) {
	a, mgmt := aclDevAgent(t)
	if resp, body := callAs(t, "", "GET", a.URL+"/v1/metrics", nil); resp.StatusCode != 403 || !bytes.HasPrefix(body, []byte("Permission denied")) {
		t.Fatalf("without a token: %d %s", resp.StatusCode, body)
	}
	if resp, body := callAs(t, mgmt, "GET", a.URL+"/v1/metrics", nil); resp.StatusCode != 200 {
		t.Fatalf("with a management token: %d %s", resp.StatusCode, body)
	}
}
