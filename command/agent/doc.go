// Package agent is the `drover agent` process: the server and client it
// starts from its configuration, and the HTTP listener that serves their
// API (command/agent/httpapi) in front of them.
//
// # Configuration
//
// The agent's configuration, from files and flags to the server's and the
// client's settings, is package command/agent/config; this package starts
// what it describes and applies a reload.
//
// # Startup and shutdown
//
// NewAgent starts the server, then the client (registered with the local
// server when there is one), then the HTTP API, and Shutdown stops them in
// the reverse order. The HTTP port is bound before the client starts so the
// client can record the address other agents reach it at (Node.HTTPAddr);
// it serves only once everything is up. Run is the command: banner,
// signals, SIGHUP reload (log level and TLS certificates; other changes
// need a restart).
//
// # TLS
//
// The tls block (config.Config.TLS) becomes one tlsutil.Manager per agent,
// handed to the server, the client's RPC pool, a client-only agent's
// remote pool, the HTTPS listener and the transport that forwards client
// requests to other agents, so one reload reaches all of them. With
// tls.http the API is served over HTTPS and the agent's URL is https;
// other agents' Node.HTTPAddr stay host:port, as in Nomad, and are dialled
// with the scheme this agent uses.
//
// # HTTP API
//
// The HTTP API is package command/agent/httpapi. The agent builds it once
// it is up (httpDeps in agent.go): its RPC path, its server and client
// behind httpapi's narrow Server and Client interfaces, a view of its
// configuration and addresses, its metrics and a transport to other
// agents. The agent keeps the listener: TLS, the header and handshake
// timeouts, and the per-client connection limit (connlimit.go). The
// compat_nomad_*_test.go files drive a dev agent with Nomad's own Go
// client, the API's compatibility check end to end.
//
// # Metrics
//
// The telemetry block (config.Config.Telemetry) becomes one
// helper/telemetry.Telemetry per agent, whose handle the server and the
// client write to and whose sinks /v1/metrics reads (httpapi); a server
// agent also receives hashicorp/raft's metrics through it. Allocation
// stats are put in Nomad's AllocResourceUsage shape here, with CPU rates
// from the task's previous sample (alloc_stats.go).
//
// Goroutines: the agent owns the HTTP serve loop (waited on in Shutdown);
// its base context ends first, so the API's streams end instead of holding
// shutdown up.
//
// Tests start a real in-process dev agent on free ports: this package's
// with NewTestAgent (testagent_test.go), other packages' with
// command/agent/agenttest. Neither is in the drover binary.
package agent
