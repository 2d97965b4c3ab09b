package httpapi

import (
	"context"
	"io"
	"net/http"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/helper/telemetry"
	"github.com/drover-sched/drover/structs"
)

// Deps is everything the HTTP API needs of the agent that serves it. The
// agent fills it in once, when it starts serving; the API keeps no other
// reference to the agent, so it can be built in a test from fakes.
type Deps struct {
	// RPC reaches the servers: the local server, or a client-only
	// agent's pool of the configured servers.
	RPC RPCer
	// Server is the agent's own server, nil on an agent without one.
	Server Server
	// Client is the agent's own client, nil on an agent without one.
	Client Client
	// Info describes the agent as it is now; it is called per request
	// because a reload changes the configuration.
	Info func() AgentInfo
	// Logger receives request failures.
	Logger hclog.Logger
	// Forward carries client requests (logs, files, stats) to the agent
	// that runs the allocation.
	Forward *http.Client
	// Scheme is "https" when the agents' API speaks TLS, which is the
	// scheme other agents' HTTPAddr are dialled with; "" means http.
	Scheme string
	// Telemetry is the agent's metrics, for /v1/metrics; nil answers 501.
	Telemetry *telemetry.Telemetry
}

// NewHandler returns the HTTP API over d: every route, each request body
// bounded by the agent's limits.
func NewHandler(d Deps) http.Handler { return newAPI(d).handler() }

// Routes lists every "METHOD /pattern" of the API NewHandler serves (all
// but the web UI's), in the order they are registered, so that a test can
// hold each of them to the token checks.
func Routes(d Deps) []string { return newAPI(d).routeList() }

func newAPI(d Deps) *httpAPI {
	return &httpAPI{
		rpc:       d.RPC,
		server:    d.Server,
		client:    d.Client,
		info:      d.Info,
		logger:    d.Logger,
		forward:   d.Forward,
		scheme:    d.Scheme,
		telemetry: d.Telemetry,
	}
}

// AgentInfo is what the HTTP API knows about its own agent.
type AgentInfo struct {
	Config *config.Config
	// HTTPAddr and RPCAddr are the advertised addresses; RPCAddr is empty
	// on an agent without a server.
	HTTPAddr string
	RPCAddr  string
	// Servers are the RPC addresses the agent's client talks to.
	Servers []string
}

// RPCer is how the HTTP API reaches the servers. On an agent with a
// server it is the server itself (in-process calls, forwarded to the
// leader by the server as needed); on a client-only agent it is a pool of
// connections to the configured servers.
//
// ctx ends the call early: a handler passes its request's context, so a
// blocking query stops waiting when its HTTP client goes away. It carries
// an rpcx.Peer naming the HTTP client, whom the servers count the call
// against (see httpAPI.call).
type RPCer interface {
	RPC(ctx context.Context, method string, args, reply any) error
}

// Server is what the HTTP API uses of the agent's own server, beyond its
// RPCs: leadership for /v1/agent/self and /v1/status, joins, and token
// resolution for the routes the agent answers itself.
type Server interface {
	RPCer
	IsLeader() bool
	// Leader is the leader's RPC address, "" when there is none.
	Leader() string
	// JoinNow joins the servers at addrs (see nomad.Server.JoinNow).
	JoinNow(addrs []string) (int, error)
	// ResolveToken is what the holder of an ACL token secret may do (see
	// nomad.Server.ResolveToken): nil while ACLs are off.
	ResolveToken(secret string) (*acl.ACL, error)
}

// Client is what the HTTP API uses of the agent's own client. A client
// may offer more (ClientActions, ClientChecks); a route it does not offer
// answers 501.
type Client interface {
	NodeID() string
	// AllocLogs streams a task's stdout or stderr; see http_client_fs.go.
	AllocLogs(allocID, task, logType, origin string, offset int64, follow bool) (io.ReadCloser, error)
	// AllocStats returns an allocation's resource usage, JSON-encodable.
	AllocStats(allocID string) (any, error)
	// LocalAlloc is the client's own copy of an allocation it runs or
	// keeps, nil for any other.
	LocalAlloc(allocID string) *structs.Allocation
	// ResolveToken is what the holder of an ACL token secret may do on
	// this client's endpoints (see client.Client.ResolveToken): nil while
	// ACLs are off.
	ResolveToken(ctx context.Context, secret string) (*acl.ACL, error)
}
