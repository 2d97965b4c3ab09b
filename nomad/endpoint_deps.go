package nomad

import (
	"context"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// The RPC endpoints (Job, Node, KV, ...) hold the server as a narrow
// interface, each listing exactly the server methods it calls, so what an
// endpoint depends on is written next to it and a test can drive it with a
// small fake (kv_endpoint_deps_test.go). The pieces most endpoints share
// are declared here once, one method each, and embedded in the endpoints'
// interfaces; widening an endpoint's reach means adding a line to its
// interface, which a reviewer sees. *Server implements all of them.

// rpcForwarder sends a request to the leader when this server should not
// answer it (rpc.go).
type rpcForwarder interface {
	forward(method string, info structs.RPCInfo, args, reply any) (bool, error)
}

// blockingQuerier runs a read that may wait for the state to change (rpc.go).
type blockingQuerier interface {
	blockingQuery(opts *structs.QueryOptions, meta *structs.QueryMeta, fn queryFn) error
}

// queryMetaSetter fills a read's freshness when it answers without
// blockingQuery (rpc.go).
type queryMetaSetter interface {
	setQueryMeta(m *structs.QueryMeta)
}

// stateReader reads the current state store (it changes on restore).
type stateReader interface {
	State() *state.StateStore
}

// raftApplier commits one raft entry (raft.go).
type raftApplier interface {
	raftApply(t structs.MessageType, msg any) (uint64, any, error)
}

// namespaceChecker checks a token's capabilities in a namespace
// (acl_check.go).
type namespaceChecker interface {
	allowNamespaceOp(info structs.RPCInfo, ns string, caps ...string) (*acl.ACL, error)
}

// managementChecker requires a management token (acl_check.go).
type managementChecker interface {
	allowManagement(info structs.RPCInfo) error
}

// nodeChecker checks a token's node read or write (acl_check.go).
type nodeChecker interface {
	allowNode(info structs.RPCInfo, write bool) (*acl.ACL, error)
}

// operatorChecker checks a token's operator read or write (acl_check.go).
type operatorChecker interface {
	allowOperator(info structs.RPCInfo, write bool) error
}

// serverPeerChecker admits only another server or this one
// (server_secret.go).
type serverPeerChecker interface {
	requireServer(method string, info structs.RPCInfo) error
}

// nodePeerChecker admits only a client or a server (peer_auth.go).
type nodePeerChecker interface {
	requireNodePeer(method string, info structs.RPCInfo) error
}

// serverLifetime is the context that ends when the server shuts down;
// endpoints that wait bound their waits by it.
type serverLifetime interface {
	lifetime() context.Context
}

// lifetime returns the context Shutdown cancels.
func (s *Server) lifetime() context.Context { return s.ctx }

var (
	_ rpcForwarder      = (*Server)(nil)
	_ blockingQuerier   = (*Server)(nil)
	_ queryMetaSetter   = (*Server)(nil)
	_ stateReader       = (*Server)(nil)
	_ raftApplier       = (*Server)(nil)
	_ namespaceChecker  = (*Server)(nil)
	_ managementChecker = (*Server)(nil)
	_ nodeChecker       = (*Server)(nil)
	_ operatorChecker   = (*Server)(nil)
	_ serverPeerChecker = (*Server)(nil)
	_ nodePeerChecker   = (*Server)(nil)
	_ serverLifetime    = (*Server)(nil)
)
