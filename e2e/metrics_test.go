//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Real agent processes with the telemetry block of their files: after a
// job runs, Prometheus scrapes of the server show the placement, the
// broker's eval time and raft's commits, and of the client the task's
// start and its running allocation.
func TestMetricsScrapedFromRealAgents(t *testing.T) {
	const telemetry = `
telemetry {
  prometheus_metrics  = true
  disable_hostname    = true
  collection_interval = "200ms"
}`
	server := newAgent(t, agentSpec{name: "server", extra: `
server {
  enabled          = true
  bootstrap_expect = 1
` + fastHeartbeats + `
}` + telemetry})
	waitForAgreedLeader(t, []*agent{server}, 30*time.Second, "")
	client := newAgent(t, agentSpec{name: "c1", extra: clientConfig([]string{strconv.Quote(server.rpcAddr())}) + telemetry})
	waitForReadyNodes(t, server, "c1")

	m := newTaskMarker(t)
	registerJob(t, server, serviceJob("metrics", m, ""), 10*time.Second)
	waitForFirstAlloc(t, server, "metrics", m)

	waitFor(t, 30*time.Second, func() (bool, string) {
		s, err := scrape(server)
		if err != nil {
			return false, err.Error()
		}
		placed, evals, commits := total(s["nomad_nomad_plan_allocs_placed"]), count(s["nomad_nomad_broker_process_time"]), count(s["nomad_raft_commitTime"])
		return placed >= 1 && evals >= 1 && commits >= 1,
			fmt.Sprintf("server: allocs_placed %v, broker.process_time %d samples, raft.commitTime %d", placed, evals, commits)
	})
	waitFor(t, 30*time.Second, func() (bool, string) {
		s, err := scrape(client)
		if err != nil {
			return false, err.Error()
		}
		starts, running := total(s["nomad_client_allocs_running"]), total(s["nomad_client_allocations_running"])
		return starts >= 1 && running == 1, fmt.Sprintf("client: task starts %v, allocations running %v", starts, running)
	})
}

// scrape reads an agent's Prometheus metrics and parses them with
// Prometheus's own text parser.
func scrape(a *agent) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(a.httpAddr() + "/v1/metrics?format=prometheus")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("scrape %s: %d %s", a.name, resp.StatusCode, body)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	return p.TextToMetricFamilies(strings.NewReader(string(body)))
}

// total sums a counter's or gauge's series.
func total(f *dto.MetricFamily) float64 {
	if f == nil {
		return 0
	}
	var sum float64
	for _, m := range f.Metric {
		sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return sum
}

// count sums a summary's sample counts.
func count(f *dto.MetricFamily) uint64 {
	if f == nil {
		return 0
	}
	var n uint64
	for _, m := range f.Metric {
		n += m.GetSummary().GetSampleCount()
	}
	return n
}
