// Package httpapi is the agent's HTTP API: Nomad's v1 paths and JSON
// shapes, served by every Drover agent in front of its server, its client
// or both. It owns the routes, the handlers (one resource family per
// http_*.go file), the mapping of errors to status codes, the bounds on
// what a request may send and hold, the token checks of what the agent
// answers itself, query parsing, filters and paging, the event stream and
// its relay, the web UI's files, and the conversion of an api.Job to a
// structs.Job (job_*.go), which the CLI's local validation uses too.
//
// # What it needs of the agent
//
// Deps (deps.go), filled in once by the agent: an RPCer that reaches the
// servers (the local server in process, or a client-only agent's pool of
// the configured servers), the agent's own Server and Client when it has
// them (narrow interfaces: leadership, joins, token resolution, a client's
// logs, stats and local allocations), a function describing the agent as
// it is now (its configuration changes on reload), a logger, metrics, and
// a transport to other agents. A client may offer more (ClientActions,
// ClientChecks) and a server may serve the event stream (EventSubscriber);
// a route whose part is missing answers 501, or for events relays the
// servers' stream. Nothing here imports the agent, the server's state or
// its event broker (imports_test.go), so the API is tested over fakes.
//
// # Promises
//
// Handlers hold no state: each is one RPC (or one local client call) and
// its answer in Nomad's shape, with X-Nomad-Index / KnownLeader /
// LastContact headers and blocking queries with ?index= and ?wait=.
//
// Errors are plain text, and their status comes from what they are, not
// their words: errorStatus maps the sentinels the servers and the client
// wrap (they keep their identity across RPC, see rpcx.RemoteError) and the
// handlers' own codedErrors to 400 (the caller's mistake), 403 (a token
// that may not), 404, 409, 413, 429, 501 (an endpoint this server does not
// have yet) or 500. Only an earlier server's answer, which has no codes,
// is read by its text (legacyStatus).
//
// Everything a request sends or holds is bounded: bodies by
// limits.http_max_body_size (job bodies by the job size limit instead)
// and by a deadline to arrive, filters by their length and evaluation
// steps, blocking queries by a longest wait, event streams by their topic
// count and write batches, and job files sent
// to /v1/jobs/parse by a child process with a heap limit and a deadline
// (job_parse_child.go, at most two at a time; a job file is a program,
// and a small one can take gigabytes or minutes to evaluate). The child
// is the agent's own executable, selected by the environment variable
// that helper/childproc registers and command.Run checks first.
//
// Every route checks the request's token (authToken: X-Nomad-Token, a
// bearer token or ?token=) with Nomad's capabilities, and a refusal is a
// 403 whose body starts with Nomad's "Permission denied". Where a route is
// one RPC, the server that answers it checks (so a direct RPC caller meets
// the same checks); what the agent answers itself (agent info, parse,
// validate, namespaces, and the client's logs, files, signals and stats)
// checks in http_acl_check.go, resolving the token with the local server,
// or on a client-only agent through its client. httpAPI.call always names
// the HTTP client as the RPC's peer, so no HTTP request is ever taken for
// the server's own work. A request for an allocation this agent's client
// runs is checked against the client's copy of it; any other is located
// by the servers (Alloc.Locate, which checks the token) and proxied to the
// agent that runs it, which checks again. Routes lists every route, and
// command/agent's TestEveryHTTPRouteRefusesARequestWithoutAToken walks
// them all on a real agent.
//
// Goroutines: a followed log stream owns one watcher that closes the log
// reader when the request ends, and waits for it before returning; a
// parse request owns its child process and waits for it; an event stream
// ends with its request or its subscription.
//
// Tests build the API over fakes (fakeAPI in http_unit_test.go); the
// tests that need a real server and client drive it through a whole agent
// in command/agent. Both share their HTTP client side through
// command/agent/internal/apitest.
package httpapi
