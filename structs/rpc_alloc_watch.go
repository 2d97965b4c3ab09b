package structs

// Server-pushed alloc-change notices (server heap per node, issue 16).
//
// A client learns that its node's allocs changed from a notice the server
// it is connected to pushes over the client's own connection, instead of
// from a blocking Node.GetClientAllocs held open on every server for every
// node. The client registers with Node.WatchAllocs; the server answers at
// once and, when an applied entry moves the node's alloc index past the
// registered one, pushes one AllocNotice and forgets the registration. The
// client then fetches its assignment with an ordinary Node.GetClientAllocs
// and registers again.

// NodeWatchAllocsRequest registers a node for one alloc-change notice on
// the connection the request arrives on. NodeID and SecretID authenticate
// the node as for Node.GetClientAllocs; Index is the alloc index of the
// assignment the node has applied.
type NodeWatchAllocsRequest struct {
	NodeID   string
	SecretID string
	Index    uint64
	QueryOptions
}

// NodeWatchAllocsResponse answers a registration with the node's current
// alloc index on the server that took it: the index Node.GetClientAllocs
// would answer with. A client whose applied index is below it fetches at
// once, which closes the race with a change between its last fetch and
// the registration.
type NodeWatchAllocsResponse struct {
	Index uint64

	// sessionClosed closes when the connection the registration went
	// over does, after which no notice can come over it (see
	// rpcx.SessionBinder). It is not part of the message.
	sessionClosed <-chan struct{}
}

// BindSession records the close channel of the connection the
// registration went over; the RPC pool calls it.
func (r *NodeWatchAllocsResponse) BindSession(closed <-chan struct{}) { r.sessionClosed = closed }

// SessionClosed closes when the registration's connection does; nil when
// unknown (the reply did not come over a pooled connection).
func (r *NodeWatchAllocsResponse) SessionClosed() <-chan struct{} { return r.sessionClosed }

// AllocNotice tells a node that its allocs changed: its alloc index on the
// pushing server reached Index.
type AllocNotice struct {
	NodeID string
	Index  uint64
}
