package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/helper/rpcx"
)

// rpcer is how the agent reaches the servers, and what it hands its HTTP
// API as httpapi.RPCer. On an agent with a server it is the server itself
// (in-process calls, forwarded to the leader by the server as needed); on
// a client-only agent it is remoteRPC.
//
// ctx ends the call early: an HTTP handler passes its request's context, so
// a blocking query stops waiting when its HTTP client goes away. It may
// carry an rpcx.Peer naming the HTTP client, whom the servers count the
// call against.
type rpcer interface {
	RPC(ctx context.Context, method string, args, reply any) error
}

// errNoServers is returned by a client-only agent that has no server to
// ask.
var errNoServers = errors.New("no servers known to this agent")

// remoteRPC sends calls to the configured servers over the rpcx pool. It
// sticks to the server that answered last and moves on to the next only
// when a call fails in transport (a handler error is an answer).
type remoteRPC struct {
	pool *rpcx.ConnPool

	mu      sync.Mutex
	servers []string
	next    int
}

// newRemoteRPC returns a remoteRPC for servers; tlsConfig, when set, makes
// it dial them over TLS.
func newRemoteRPC(servers []string, logger hclog.Logger, tlsConfig *tls.Config) *remoteRPC {
	return &remoteRPC{
		pool:    rpcx.NewConnPool(rpcx.PoolConfig{Logger: logger, TLS: tlsConfig}),
		servers: append([]string(nil), servers...),
	}
}

// RPC implements rpcer.
func (r *remoteRPC) RPC(ctx context.Context, method string, args, reply any) error {
	r.mu.Lock()
	servers := append([]string(nil), r.servers...)
	start := r.next
	r.mu.Unlock()
	if len(servers) == 0 {
		return errNoServers
	}
	var errs []error
	for i := range servers {
		idx := (start + i) % len(servers)
		err := r.pool.RPC(ctx, servers[idx], method, args, reply)
		if err == nil || rpcx.IsRemoteError(err) {
			r.mu.Lock()
			r.next = idx
			r.mu.Unlock()
			return err
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("no server answered %s: %w", method, errors.Join(errs...))
}

// Servers returns the server list, for /v1/agent/servers.
func (r *remoteRPC) Servers() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.servers...)
}

// Shutdown closes the pool's sessions and waits for its goroutines.
func (r *remoteRPC) Shutdown() { r.pool.Shutdown() }
