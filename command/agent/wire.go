package agent

import (
	"context"

	"github.com/drover-sched/drover/client"
	clientconfig "github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/command/agent/httpapi"
	"github.com/drover-sched/drover/nomad"
)

// wire.go is the one place naming the concrete server and client; the rest
// of the package works with serverHandle and clientHandle.

// The HTTP API finds what the real server and client offer beyond its
// Server and Client by asking (a fake may lack it, and the route answers
// 501), so these say at compile time that the real ones lack nothing.
var (
	_ httpapi.EventSubscriber = nomadServer{}
	_ httpapi.ClientActions   = (*droverClient)(nil)
	_ httpapi.ClientChecks    = (*droverClient)(nil)
)

// newServer creates the server.
func newServer(cfg *nomad.Config) (serverHandle, error) {
	s, err := nomad.NewServer(cfg)
	if err != nil {
		return nil, err
	}
	return nomadServer{s}, nil
}

// nomadServer adapts *nomad.Server to serverHandle.
type nomadServer struct{ *nomad.Server }

// RPC calls the server in process; see nomad.Server.RPCContext.
func (s nomadServer) RPC(ctx context.Context, method string, args, reply any) error {
	return s.Server.RPCContext(ctx, method, args, reply)
}

// Leader returns the leader's RPC address.
func (s nomadServer) Leader() string {
	addr, _ := s.Server.Leader()
	return addr
}

// newClient creates the client.
func newClient(cfg *clientconfig.Config) (clientHandle, error) {
	c, err := client.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	return &droverClient{Client: c}, nil
}

// droverClient adapts *client.Client to clientHandle.
type droverClient struct {
	*client.Client
	usage usageConverter
}

// AllocStats returns the alloc's usage in Nomad's AllocResourceUsage
// shape (see alloc_stats.go).
func (c *droverClient) AllocStats(allocID string) (any, error) {
	u, err := c.Client.AllocStats(allocID)
	if err != nil {
		return nil, err
	}
	var mhz float64
	if n := c.Client.Node(); n != nil {
		mhz = mhzPerCore(n.Attributes)
	}
	return c.usage.convert(allocID, u, mhz), nil
}

// Shutdown stops the client and waits for it.
func (c *droverClient) Shutdown() error {
	c.Client.Shutdown()
	return nil
}
