package allocsync

import (
	"context"
	"errors"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// Server-pushed alloc-change notices (server heap per node, issue 16).
//
// A node registers with Node.WatchAllocs and waits for a notice instead
// of holding a blocking Node.GetClientAllocs open on a server. The server
// pushes the notice over the node's own session; the RPC pool hands it to
// a Router, which posts it to the node's Mailbox. The node then fetches
// its assignment with a non-blocking Node.GetClientAllocs and registers
// again. Safety nets, each in the watch loops: the registration answers
// with the server's current index (fetch at once if it is above the
// node's); the node registers again when the session it registered over
// closes, and every Lease in any case; a server that does not know
// Node.WatchAllocs makes the node fall back to the blocking query.

// Mailbox holds the newest notice for one node: notices coalesce, so a
// burst of changes makes one fetch.
type Mailbox struct {
	mu    sync.Mutex
	index uint64
	ready chan struct{}
}

// NewMailbox returns an empty mailbox.
func NewMailbox() *Mailbox { return &Mailbox{ready: make(chan struct{}, 1)} }

// Post records a notice at index. It never blocks.
func (m *Mailbox) Post(index uint64) {
	m.mu.Lock()
	if index > m.index {
		m.index = index
	}
	m.mu.Unlock()
	select {
	case m.ready <- struct{}{}:
	default:
	}
}

// Ready has a value when a notice was posted since the last Take.
func (m *Mailbox) Ready() <-chan struct{} { return m.ready }

// Take returns the highest index posted since the last Take, and empties
// the mailbox.
func (m *Mailbox) Take() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	select {
	case <-m.ready:
	default:
	}
	index := m.index
	m.index = 0
	return index
}

// Router hands each notice a pool receives to the mailbox of the node it
// names. A pool serves one real client, or many simulated nodes.
type Router struct {
	logger hclog.Logger

	mu    sync.Mutex
	boxes map[string]*Mailbox
}

// NewRouter returns a router with no nodes.
func NewRouter(logger hclog.Logger) *Router {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return &Router{logger: logger, boxes: map[string]*Mailbox{}}
}

// Add gives nodeID a mailbox and returns it; a node added again keeps its
// mailbox.
func (r *Router) Add(nodeID string) *Mailbox {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := r.boxes[nodeID]; ok {
		return m
	}
	m := NewMailbox()
	r.boxes[nodeID] = m
	return m
}

// Remove forgets nodeID.
func (r *Router) Remove(nodeID string) {
	r.mu.Lock()
	delete(r.boxes, nodeID)
	r.mu.Unlock()
}

// OnNotice is the pool's rpcx.PoolConfig.OnNotice: it decodes a
// structs.AllocNotice and posts it. A notice that does not decode, or
// names no node of this router, is logged and dropped.
func (r *Router) OnNotice(addr string, payload []byte) {
	var n structs.AllocNotice
	if err := rpcx.Decode(payload, &n); err != nil {
		r.logger.Warn("dropped a notice that does not decode as an alloc notice", "server", addr, "error", err)
		return
	}
	r.mu.Lock()
	m := r.boxes[n.NodeID]
	r.mu.Unlock()
	if m == nil {
		r.logger.Debug("dropped an alloc notice for a node not watched here", "server", addr, "node_id", n.NodeID)
		return
	}
	m.Post(n.Index)
}

// Register registers the node for one notice at index (the alloc index of
// the assignment it applied) and returns the server's current index and
// the channel that closes with the registration's session (nil if
// unknown). ErrNoticesUnsupported means the server does not know
// Node.WatchAllocs: the node falls back to the blocking query.
func Register(ctx context.Context, call Caller, q Query, index uint64) (uint64, <-chan struct{}, error) {
	req := &structs.NodeWatchAllocsRequest{NodeID: q.NodeID, SecretID: q.SecretID, Index: index,
		QueryOptions: structs.QueryOptions{Region: q.Region, AllowStale: true}}
	var resp structs.NodeWatchAllocsResponse
	if err := call(ctx, "Node.WatchAllocs", req, &resp); err != nil {
		if errors.Is(err, rpcx.ErrUnknownMethod) {
			return 0, nil, ErrNoticesUnsupported
		}
		return 0, nil, err
	}
	return resp.Index, resp.SessionClosed(), nil
}

// ErrNoticesUnsupported is Register's error against a server that does not
// know Node.WatchAllocs (an earlier release).
var ErrNoticesUnsupported = errors.New("the server does not push alloc notices (no Node.WatchAllocs)")
