package agent

import (
	"context"
	"io"

	"github.com/drover-sched/drover/acl"
	clientconfig "github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/structs"
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
	// ResolveToken is what the holder of an ACL token secret may do (see
	// nomad.Server.ResolveToken): nil while ACLs are off.
	ResolveToken(secret string) (*acl.ACL, error)
}

// clientHandle is what the agent needs of a running client.
type clientHandle interface {
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
	Shutdown() error
}

// startServer and startClient create the real server and client. They are
// variables only so that wire.go is the one place naming the concrete
// constructors.
var (
	startServer = func(cfg *nomad.Config) (serverHandle, error) { return newServer(cfg) }
	startClient = func(cfg *clientconfig.Config) (clientHandle, error) { return newClient(cfg) }
)
