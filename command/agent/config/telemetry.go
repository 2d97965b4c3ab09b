package config

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/helper/telemetry"
)

// The telemetry block, Nomad's keys (helper/telemetry says what each
// does):
//
//	telemetry {
//	  collection_interval        = "1s"
//	  disable_hostname           = true
//	  use_node_name              = false
//	  prometheus_metrics         = true   # /v1/metrics?format=prometheus
//	  publish_allocation_metrics = true   # tasks' resource usage
//	  publish_node_metrics       = true   # the host's resource usage
//	  prefix_filter              = ["-nomad.raft", "+nomad.raft.apply"]
//	  filter_default             = true
//	  in_memory_collection_interval = "10s"
//	  in_memory_retention_period    = "1m"
//	}
//
// Drover keeps metrics in memory and serves them on /v1/metrics, in JSON
// or for Prometheus to scrape; the keys of Nomad's push sinks (statsd,
// statsite, DataDog, Circonus) and of metrics Drover does not have are
// accepted with a warning.

const telemetryPushSink = "Drover has no push sinks; scrape /v1/metrics?format=prometheus (prometheus_metrics = true)"

var ignoredTelemetry = func() map[string]string {
	m := map[string]string{
		"statsite_address":                       telemetryPushSink,
		"statsd_address":                         telemetryPushSink,
		"datadog_address":                        telemetryPushSink,
		"datadog_tags":                           telemetryPushSink,
		"disable_dispatched_job_summary_metrics": "Drover has no job summary metrics",
		"disable_quota_utilization_metrics":      "Drover has no quotas",
		"disable_rpc_rate_metrics_labels":        "Drover's RPC counters carry no labels",
		"disable_allocation_hook_metrics":        "Drover has no hook metrics",
		"disable_tagged_metrics":                 "Drover's metrics are always tagged",
		"backwards_compatible_metrics":           "Drover has only the tagged metric names",
	}
	for _, k := range []string{
		"circonus_api_token", "circonus_api_app", "circonus_api_url", "circonus_submission_interval",
		"circonus_submission_url", "circonus_check_id", "circonus_check_force_metric_activation",
		"circonus_check_instance_id", "circonus_check_search_tag", "circonus_check_display_name",
		"circonus_check_tags", "circonus_broker_id", "circonus_broker_select_tag",
	} {
		m[k] = telemetryPushSink
	}
	return m
}()

func (d *decoder) decodeTelemetry(body hcl.Body, t *telemetry.Config) {
	d.walk(body, &section{
		path: "telemetry",
		attrs: map[string]attrFunc{
			"collection_interval":           durAttr(&t.CollectionInterval),
			"disable_hostname":              boolAttr(&t.DisableHostname),
			"use_node_name":                 boolAttr(&t.UseNodeName),
			"prometheus_metrics":            boolAttr(&t.PrometheusMetrics),
			"publish_allocation_metrics":    boolAttr(&t.PublishAllocationMetrics),
			"publish_node_metrics":          boolAttr(&t.PublishNodeMetrics),
			"prefix_filter":                 listAttr(&t.PrefixFilter),
			"filter_default":                boolPtrAttr(&t.FilterDefault),
			"in_memory_collection_interval": durAttr(&t.InMemoryCollectionInterval),
			"in_memory_retention_period":    durAttr(&t.InMemoryRetentionPeriod),
		},
		ignored: ignoredTelemetry,
	})
}

// boolPtrAttr is a boolean whose false must survive merging (a later file
// may turn filter_default off).
func boolPtrAttr(dst **bool) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		var b bool
		before := len(d.problems)
		boolAttr(&b)(d, key, a)
		if len(d.problems) == before {
			*dst = &b
		}
	}
}

// mergeTelemetry overlays what o sets; as everywhere in the agent file, a
// later file cannot switch a boolean back off (filter_default excepted:
// its default is on).
func mergeTelemetry(t telemetry.Config, o *telemetry.Config) telemetry.Config {
	setDur(&t.CollectionInterval, o.CollectionInterval)
	t.DisableHostname = t.DisableHostname || o.DisableHostname
	t.UseNodeName = t.UseNodeName || o.UseNodeName
	t.PrometheusMetrics = t.PrometheusMetrics || o.PrometheusMetrics
	t.PublishAllocationMetrics = t.PublishAllocationMetrics || o.PublishAllocationMetrics
	t.PublishNodeMetrics = t.PublishNodeMetrics || o.PublishNodeMetrics
	setList(&t.PrefixFilter, o.PrefixFilter)
	if o.FilterDefault != nil {
		b := *o.FilterDefault
		t.FilterDefault = &b
	}
	setDur(&t.InMemoryCollectionInterval, o.InMemoryCollectionInterval)
	setDur(&t.InMemoryRetentionPeriod, o.InMemoryRetentionPeriod)
	return t
}

// copyTelemetry is a deep copy.
func copyTelemetry(t telemetry.Config) telemetry.Config {
	t.PrefixFilter = append([]string(nil), t.PrefixFilter...)
	if t.FilterDefault != nil {
		b := *t.FilterDefault
		t.FilterDefault = &b
	}
	return t
}
