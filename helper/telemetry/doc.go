// Package telemetry gives each Drover agent its own metrics: one
// *metrics.Metrics (hashicorp/go-metrics, the library Nomad uses) writing
// to an in-memory sink, which /v1/metrics shows in Nomad's JSON shape, and,
// with telemetry { prometheus_metrics = true }, to a Prometheus sink with a
// registry of its own, which /v1/metrics?format=prometheus serves.
//
// # Names
//
// Metrics carry Nomad's names, "nomad." first (nomad.nomad.broker.total_ready,
// nomad.client.allocations.running, nomad.raft.commitTime, ...), so the
// dashboards and alerts people already have for Nomad work against Drover
// unchanged. Where Drover measures something Nomad has no metric for, the
// name sits beside Nomad's in the same tree and docs/metrics.md lists it.
//
// # One sink per agent, except raft's
//
// Components are handed the agent's *metrics.Metrics (nomad.Config.Metrics,
// the client's config.Metrics); nothing of Drover's writes to go-metrics'
// process-wide default, so two agents in one test process never see each
// other's metrics. A component given none writes to Discard.
//
// hashicorp/raft and raft-boltdb are the exception: they emit through the
// process-wide handler of armon/go-metrics (go-metrics' compat package
// routes there unless the binary is built with the hashicorpmetrics tag).
// BridgeRaft installs, once per process, an armon sink that forwards to
// every agent that asked for raft's metrics. A production agent is one
// process, so this is exact there; in a test process holding several
// servers, each of them sees the nomad.raft.* metrics of all of them.
//
// # Goroutines
//
// New starts one loop, owned by the Telemetry and stopped by Shutdown, that
// emits Go runtime metrics every collection_interval (go-metrics' own
// runtime collector is a goroutine that never ends, so it is not used). The
// server's and the client's periodic gauges are emitted by loops of their
// own, at the same interval.
package telemetry
