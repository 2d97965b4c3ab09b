package command

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/command/agent/agenttest"
	"github.com/drover-sched/drover/command/agent/config"
)

// operator metrics against a real agent: JSON in Nomad's shape, the
// Prometheus text format when the agent enables it, and a clear error
// when it does not.
func TestOperatorMetricsAgainstAnAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real agent")
	}
	withProm := func(c *config.Config) {
		c.Client.Enabled = false
		c.Telemetry.PrometheusMetrics = true
		c.Telemetry.DisableHostname = true
	}
	skipWithoutAgent(t, withProm)
	ta := agenttest.New(t, withProm)
	addr := "-address=" + ta.URL

	res := runCLI(t, nil, "", "operator", "metrics", addr, "-pretty")
	if res.code != 0 {
		t.Fatalf("operator metrics: exit %d: %s", res.code, res.stderr)
	}
	var summary api.MetricsSummary
	if err := json.Unmarshal([]byte(res.stdout), &summary); err != nil || summary.Timestamp == "" || len(summary.Gauges) == 0 {
		t.Fatalf("not a metrics summary (%v):\n%s", err, res.stdout)
	}
	if !strings.Contains(res.stdout, "\n    ") {
		t.Fatal("-pretty did not indent the JSON")
	}

	res = runCLI(t, nil, "", "operator", "metrics", addr, "-format=prometheus")
	if res.code != 0 {
		t.Fatalf("operator metrics -format=prometheus: exit %d: %s", res.code, res.stderr)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(res.stdout))
	if err != nil || families["nomad_nomad_broker_total_ready"] == nil {
		t.Fatalf("not Prometheus text with the broker's gauges (%v):\n%.2000s", err, res.stdout)
	}

	if res := runCLI(t, nil, "", "operator", "metrics", addr, "-format=xml"); res.code != 1 || !strings.Contains(res.stderr, `-format must be "prometheus"`) {
		t.Fatalf("-format=xml: exit %d: %s", res.code, res.stderr)
	}
}

func TestOperatorMetricsSaysWhenPrometheusIsOff(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real agent")
	}
	serverOnly := func(c *config.Config) { c.Client.Enabled = false }
	skipWithoutAgent(t, serverOnly)
	ta := agenttest.New(t, serverOnly)
	res := runCLI(t, nil, "", "operator", "metrics", "-address="+ta.URL, "-format=prometheus")
	if res.code != 1 || !strings.Contains(res.stderr, "Prometheus is not enabled") || !strings.Contains(res.stderr, "prometheus_metrics = true") {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
}
