package agent

import (
	"io"

	clientconfig "github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/nomad"
)

// serverHandle is what the agent needs of a running server. It is an
// interface so the HTTP API and the agent's lifecycle can be tested with a
// fake, and so this package does not depend on the server's internals.
type serverHandle interface {
	rpcer
	Shutdown() error
	// RPCAddr is the address clients and other servers dial.
	RPCAddr() string
	IsLeader() bool
	// Leader is the leader's RPC address, "" when there is none.
	Leader() string
	// JoinNow joins the servers at addrs (see nomad.Server.JoinNow).
	JoinNow(addrs []string) (int, error)
}

// clientHandle is what the agent needs of a running client.
type clientHandle interface {
	NodeID() string
	// AllocLogs streams a task's stdout or stderr; see http_client_fs.go.
	AllocLogs(allocID, task, logType, origin string, offset int64, follow bool) (io.ReadCloser, error)
	// AllocStats returns an allocation's resource usage, JSON-encodable.
	AllocStats(allocID string) (any, error)
	Shutdown() error
}

// startServer and startClient create the real server and client. They are
// variables only so that wire.go is the one place naming the concrete
// constructors.
var (
	startServer = func(cfg *nomad.Config) (serverHandle, error) { return newServer(cfg) }
	startClient = func(cfg *clientconfig.Config) (clientHandle, error) { return newClient(cfg) }
)
