// Package agent is the `drover agent` process: the server and client it
// starts from its configuration, and the HTTP API in front of them.
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
// The API follows Nomad's v1 shapes: paths, PascalCase JSON of the structs
// types encoded directly, X-Nomad-Index / KnownLeader / LastContact
// headers, blocking queries with ?index= and ?wait=. Handlers hold no
// state; each is one RPC through the rpcer interface, which is the local
// server or, on a client-only agent, the configured servers over the rpcx
// pool. Errors are plain text; errorStatus maps them to 400 (the caller's
// mistake), 403 (a token that may not), 404, 409, 501 (endpoint not on
// this server yet) or 500. Jobs
// arrive in the api package's form and are converted by
// ApiJobToStructJob. Log and stats requests for an allocation on another
// node are proxied to that node's agent; stats are answered in Nomad's
// AllocResourceUsage shape, with CPU rates from the task's previous sample
// (alloc_stats.go). Nomad's own Go client is the compatibility check: the
// compat_nomad_*_test.go files drive a dev agent with it.
//
// # ACL tokens
//
// Every route checks the request's token (authToken: X-Nomad-Token, a
// bearer token or ?token=), with Nomad's capabilities, and a refusal is a
// 403 whose body starts with Nomad's "Permission denied". Where a route is
// one RPC, the server that answers the RPC checks (so a direct RPC caller
// meets the same checks); what the agent answers itself (agent info,
// parse, validate, namespaces, and the client's logs, files, signals and
// stats) checks in http_acl_check.go, resolving the token with the local
// server, or on a client-only agent through its client, which asks the
// servers and remembers the answer for acl.token_ttl. httpAPI.call always
// names the HTTP client as the RPC's peer, so no HTTP request is ever
// taken for the server's own work. A request for an allocation this
// agent's client runs is checked here against the client's copy of it;
// any other is located by the servers (Alloc.Locate, which checks the
// token) and proxied to the agent that runs it, which checks again.
// TestEveryHTTPRouteRefusesARequestWithoutAToken walks every registered
// route.
//
// # Job files from the network
//
// A job file is a program (for expressions, locals, number literals), and
// a small one can take gigabytes or minutes to evaluate, so
// /v1/jobs/parse never evaluates one in the agent: it runs the agent's own
// executable as a child (job_parse_child.go, selected by an environment
// variable that command.Run checks first), with a heap limit the child
// watches and a deadline the agent enforces, at most two at a time.
//
// # Metrics
//
// The telemetry block (config.Config.Telemetry) becomes one
// helper/telemetry.Telemetry per agent, whose handle the server and the
// client write to and whose sinks /v1/metrics reads (http_metrics.go); a
// server agent also receives hashicorp/raft's metrics through it.
//
// Goroutines: the agent owns the HTTP serve loop (waited on in Shutdown);
// a followed log stream owns one watcher that closes the log reader when
// the request ends, and waits for it before returning. A parse request
// owns its child process and waits for it.
//
// Tests start a real in-process dev agent on free ports: this package's
// with NewTestAgent (testagent_test.go), other packages' with
// command/agent/agenttest. Neither is in the drover binary.
package agent
