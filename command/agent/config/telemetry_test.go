package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drover-sched/drover/helper/telemetry"
)

func TestTelemetryBlock(t *testing.T) {
	src := `telemetry {
  collection_interval           = "5s"
  disable_hostname              = true
  use_node_name                 = true
  prometheus_metrics            = true
  publish_allocation_metrics    = true
  publish_node_metrics          = true
  prefix_filter                 = ["-nomad.raft", "+nomad.raft.apply"]
  filter_default                = false
  in_memory_collection_interval = "2s"
  in_memory_retention_period    = "30s"
  statsd_address                = "127.0.0.1:8125"
  circonus_api_token            = "x"
}
`
	c, warnings, err := Parse("agent.hcl", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if len(warnings) != 2 || !strings.Contains(strings.Join(warnings, "\n"), "statsd_address") ||
		!strings.Contains(warnings[0], "scrape /v1/metrics?format=prometheus") {
		t.Fatalf("warnings = %q; want one each for statsd_address and circonus_api_token, saying what to do", warnings)
	}
	off := false
	want := telemetry.Config{
		CollectionInterval: 5 * time.Second, DisableHostname: true, UseNodeName: true, PrometheusMetrics: true,
		PublishAllocationMetrics: true, PublishNodeMetrics: true,
		PrefixFilter: []string{"-nomad.raft", "+nomad.raft.apply"}, FilterDefault: &off,
		InMemoryCollectionInterval: 2 * time.Second, InMemoryRetentionPeriod: 30 * time.Second,
	}
	if diff := cmp.Diff(want, c.Telemetry); diff != "" {
		t.Fatalf("telemetry (-want +got):\n%s", diff)
	}
	merged := Dev().Merge(c)
	if err := merged.Validate(); err != nil {
		t.Fatal(err)
	}
	cp := merged.Copy()
	cp.Telemetry.PrefixFilter[0] = "+changed"
	*cp.Telemetry.FilterDefault = true
	if merged.Telemetry.PrefixFilter[0] != "-nomad.raft" || *merged.Telemetry.FilterDefault {
		t.Fatal("Copy shares the telemetry block's slice or pointer")
	}
}

func TestTelemetryBlockMerging(t *testing.T) {
	first, _, err := Parse("a.hcl", []byte("telemetry {\n  prometheus_metrics = true\n  filter_default = false\n  collection_interval = \"2s\"\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	later, _, err := Parse("b.hcl", []byte("telemetry {\n  prometheus_metrics = false\n  filter_default = true\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	m := Default().Merge(first).Merge(later).Telemetry
	if !m.PrometheusMetrics || m.FilterDefault == nil || !*m.FilterDefault || m.CollectionInterval != 2*time.Second {
		t.Fatalf("merged = %+v: a later file keeps prometheus_metrics on, sets filter_default, keeps the interval", m)
	}
}

func TestTelemetryBlockRefusesBadValuesByKey(t *testing.T) {
	_, _, err := Parse("agent.hcl", []byte("telemetry {\n  prometheus_metrics = \"sure\"\n  collection_interval = \"often\"\n  prefix_filter = \"nomad\"\n}\n"))
	for _, want := range []string{"prometheus_metrics", "collection_interval", "prefix_filter"} {
		if err == nil || !strings.Contains(err.Error(), "telemetry."+want) {
			t.Errorf("got %v; want an error naming telemetry.%s", err, want)
		}
	}
	c, _, err := Parse("agent.hcl", []byte("telemetry {\n  collection_interval = \"1ms\"\n  prefix_filter = [\"nomad.raft\"]\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = Dev().Merge(c).Validate()
	if err == nil || !strings.Contains(err.Error(), "telemetry.collection_interval must be between 100ms") ||
		!strings.Contains(err.Error(), `telemetry.prefix_filter[0]: "nomad.raft" must be a metric name prefix after + (allow) or - (block)`) {
		t.Fatalf("got %v", err)
	}
}
