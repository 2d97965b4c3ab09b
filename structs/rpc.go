package structs

import (
	"context"
	"time"
)

// QueryOptions are common to every read RPC. MinQueryIndex and MaxQueryTime
// make it a blocking query: the server answers once its state passes the
// index, or when the wait runs out.
type QueryOptions struct {
	Region        string
	Namespace     string
	MinQueryIndex uint64
	MaxQueryTime  time.Duration
	AllowStale    bool
	Prefix        string
	AuthToken     string
	PerPage       int32
	NextToken     string
	Forwarded     bool
	// ServerToken is the cluster's server secret, set by a server that
	// forwards the request: the proof, when ACLs are on, that a request
	// marked Forwarded comes from a server (see nomad.Server.requireServer).
	ServerToken string

	// callCtx is the context of the RPC this request arrived in: it
	// names the caller and ends when the caller is gone. It is not part
	// of the message (unexported fields are never encoded).
	callCtx context.Context
}

// SetCallContext records the context of the RPC this request arrived in.
// The RPC server calls it before running the endpoint.
func (q *QueryOptions) SetCallContext(ctx context.Context) { q.callCtx = ctx }

// CallContext is the context of the RPC this request arrived in; a request
// made in code without one gets context.Background().
func (q *QueryOptions) CallContext() context.Context {
	if q.callCtx == nil {
		return context.Background()
	}
	return q.callCtx
}

// IsLongPoll reports whether the read may wait for a change (a blocking
// query), so the RPC pool sends it on its long-poll session.
func (q *QueryOptions) IsLongPoll() bool { return q.MinQueryIndex > 0 }

// RequestRegion returns the region, for forwarding.
func (q *QueryOptions) RequestRegion() string { return q.Region }

// IsRead reports that this is a read; reads may be served by followers when
// AllowStale is set.
func (q *QueryOptions) IsRead() bool { return true }

// AllowStaleRead reports whether a follower may answer.
func (q *QueryOptions) AllowStaleRead() bool { return q.AllowStale }

// IsForwarded reports whether a server already forwarded this request.
func (q *QueryOptions) IsForwarded() bool { return q.Forwarded }

// SetForwarded marks the request as forwarded, to stop forwarding loops.
func (q *QueryOptions) SetForwarded() { q.Forwarded = true }

// RequestAuthToken is the caller's ACL token secret ("" for none).
func (q *QueryOptions) RequestAuthToken() string { return q.AuthToken }

// SetRequestAuthToken replaces the token the request acts with.
func (q *QueryOptions) SetRequestAuthToken(t string) { q.AuthToken = t }

// RequestServerToken is the server secret a forwarding server attached.
func (q *QueryOptions) RequestServerToken() string { return q.ServerToken }

// SetRequestServerToken attaches a forwarding server's proof.
func (q *QueryOptions) SetRequestServerToken(t string) { q.ServerToken = t }

// QueryMeta is returned with every read: the index the answer reflects,
// whether the server knew a leader, and how long since it heard from it.
type QueryMeta struct {
	Index       uint64
	LastContact time.Duration
	KnownLeader bool
	NextToken   string
}

// WriteRequest is common to every write RPC.
type WriteRequest struct {
	Region    string
	Namespace string
	AuthToken string
	Forwarded bool
	// ServerToken: see QueryOptions.ServerToken. It never reaches raft.
	ServerToken string

	// callCtx: see QueryOptions.callCtx.
	callCtx context.Context
}

// SetCallContext records the context of the RPC this request arrived in.
func (w *WriteRequest) SetCallContext(ctx context.Context) { w.callCtx = ctx }

// CallContext is the context of the RPC this request arrived in, or
// context.Background().
func (w *WriteRequest) CallContext() context.Context {
	if w.callCtx == nil {
		return context.Background()
	}
	return w.callCtx
}

// RequestRegion returns the region.
func (w *WriteRequest) RequestRegion() string { return w.Region }

// IsRead reports that writes are not reads.
func (w *WriteRequest) IsRead() bool { return false }

// AllowStaleRead is false for writes.
func (w *WriteRequest) AllowStaleRead() bool { return false }

// IsForwarded reports whether a server already forwarded this request.
func (w *WriteRequest) IsForwarded() bool { return w.Forwarded }

// SetForwarded marks the request as forwarded.
func (w *WriteRequest) SetForwarded() { w.Forwarded = true }

// RequestAuthToken is the caller's ACL token secret ("" for none).
func (w *WriteRequest) RequestAuthToken() string { return w.AuthToken }

// SetRequestAuthToken replaces the token the request acts with.
func (w *WriteRequest) SetRequestAuthToken(t string) { w.AuthToken = t }

// RequestServerToken is the server secret a forwarding server attached.
func (w *WriteRequest) RequestServerToken() string { return w.ServerToken }

// SetRequestServerToken attaches a forwarding server's proof.
func (w *WriteRequest) SetRequestServerToken(t string) { w.ServerToken = t }

// ClearAuthToken forgets the caller's token and a forwarding server's
// proof. The server calls it before a request becomes a raft entry, so no
// caller's secret is ever written to the log.
func (w *WriteRequest) ClearAuthToken() { w.AuthToken, w.ServerToken = "", "" }

// WriteMeta is returned with every write: the raft index it committed at.
type WriteMeta struct {
	Index uint64
}

// RPCInfo is implemented by every request so the server can decide where
// it is answered.
type RPCInfo interface {
	RequestRegion() string
	IsRead() bool
	AllowStaleRead() bool
	IsForwarded() bool
	SetForwarded()
	// CallContext is the context of the RPC the request arrived in.
	CallContext() context.Context
	// RequestAuthToken and SetRequestAuthToken read and replace the
	// caller's ACL token; RequestServerToken and SetRequestServerToken
	// the proof a forwarding server attaches (see nomad's acl_check.go).
	RequestAuthToken() string
	SetRequestAuthToken(string)
	RequestServerToken() string
	SetRequestServerToken(string)
}

// GenericRequest is a request with no arguments.
type GenericRequest struct {
	QueryOptions
}

// GenericResponse is a response with only an index.
type GenericResponse struct {
	WriteMeta
}

// GenericWriteRequest is a raw key/value write used to exercise the cluster
// in tests and by operators checking replication.
type GenericWriteRequest struct {
	Key   string
	Value string
	WriteRequest
}

// GenericReadRequest reads a key written by GenericWriteRequest.
type GenericReadRequest struct {
	Key string
	QueryOptions
}

// GenericReadResponse answers GenericReadRequest.
type GenericReadResponse struct {
	Value string
	Found bool
	QueryMeta
}

// PeersResponse lists the raft peers.
type PeersResponse struct {
	Peers []string
}

// RaftServer is one member of the raft configuration.
type RaftServer struct {
	ID           string
	Node         string
	Address      string
	Leader       bool
	Voter        bool
	RaftProtocol string
}

// RaftConfigurationResponse is the raft configuration.
type RaftConfigurationResponse struct {
	Servers []*RaftServer
	Index   uint64
}

// RaftPeerAddRequest asks the leader to add a server as a voter.
type RaftPeerAddRequest struct {
	ID      string
	Address string
	WriteRequest
}
