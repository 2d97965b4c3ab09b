package agent

import (
	clientconfig "github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/command/agent/httpapi"
	"github.com/drover-sched/drover/nomad"
)

// serverHandle is what the agent needs of a running server: what its HTTP
// API uses (httpapi.Server), its address and its lifecycle. It is an
// interface so the agent's lifecycle can be tested with a fake, and so
// this package does not depend on the server's internals.
type serverHandle interface {
	httpapi.Server
	Shutdown() error
	// RPCAddr is the address clients and other servers dial.
	RPCAddr() string
}

// clientHandle is what the agent needs of a running client: what its
// HTTP API uses (httpapi.Client) and its lifecycle.
type clientHandle interface {
	httpapi.Client
	Shutdown() error
}

// startServer and startClient create the real server and client. They are
// variables only so that wire.go is the one place naming the concrete
// constructors.
var (
	startServer = func(cfg *nomad.Config) (serverHandle, error) { return newServer(cfg) }
	startClient = func(cfg *clientconfig.Config) (clientHandle, error) { return newClient(cfg) }
)
