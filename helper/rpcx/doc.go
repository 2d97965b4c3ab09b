// Package rpcx is the RPC transport shared by Drover servers and clients.
//
// # One port, first byte decides
//
// A server listens on a single TCP port for everything: client agents'
// RPCs, other servers' forwarded RPCs, and raft replication. One port means
// one address to advertise, one firewall rule, and one place to add TLS
// later. The first byte a dialer writes on a new connection says what
// follows (see ConnType):
//
//	0x01 RPCStandard   one net/rpc connection
//	0x02 RPCRaft       hashicorp/raft's protocol, handed to a RaftLayer
//	0x03 RPCMultiplex  a yamux session; each stream is one net/rpc connection
//	0x04 RPCTLS        a TLS handshake, then one of the above inside TLS
//	0x05 RPCNotice     not a connection: starts a stream a server opens on a
//	                   client's session to push one notice (notice.go)
//
// A connection that sends nothing within the handshake timeout, or sends an
// unknown byte, is closed.
//
// # TLS
//
// A server made WithTLS accepts only RPCTLS: a connection whose first byte
// is anything else is closed before another byte is read, and the refusal
// is logged at most once a minute per client IP. The handshake and the
// inner type byte must arrive within the handshake timeout. The TLS config
// decides which client certificates are good (Drover's requires one signed
// by the CA, see helper/tlsutil); every call on the connection then carries
// the verified state in its Peer, and a ConnAuthorizer may refuse a peer a
// connection type before anything of it is served: Drover's servers let
// only server certificates speak raft. The ConnPool (PoolConfig.TLS) and
// the RaftLayer dial with TLS when given a config.
//
// # Why yamux
//
// Plain net/rpc can carry concurrent calls on one connection, but they share
// one byte stream: a large request or response holds up every call behind
// it, and a single call cannot be abandoned without closing the connection
// and failing all the others. yamux gives each call its own stream, with
// its own flow control, over one TCP connection. A client agent with dozens
// of calls in flight (several of them blocking queries that wait minutes)
// uses one connection per server, a slow call never delays the others, and
// a caller whose context ends closes just its stream. The ConnPool keeps
// that one session per server address, plus a few idle streams per session
// for reuse, which about halves the cost of a small call.
//
// # Messages
//
// Each call is a request message answered by a response message. A message
// is two msgpack values back to back: the net/rpc header (rpc.Request or
// rpc.Response, encoded as a map of their exported fields) and the body.
// This is the framing of github.com/hashicorp/net-rpc-msgpackrpc, and
// MsgpackHandle is the encoding. The one addition is an ErrorCode in the
// header of an error answer, which peers that do not know it skip (see
// Errors).
//
// The codec reads a message as bytes first and decodes second (see
// frameScanner): every length prefix is checked against a per-message size
// limit before anything is allocated, and nesting depth is bounded. A peer
// that sends an oversized or malformed message gets its connection or stream
// closed; one that sends a well-formed body of the wrong type, or calls an
// unknown method, gets an error reply and its connection keeps working.
//
// # Calls
//
// Endpoints are written as for net/rpc (see Server.Register), and clients
// are net/rpc clients, but the server dispatches calls itself (dispatch.go)
// rather than through net/rpc's server, which does not recover a panic in a
// method and so would let one bad request kill the whole process. Here a
// method that panics is logged with its stack and fails only its own call,
// with "rpc: internal error in Service.Method: <panic>"; the connection and
// the other calls on it carry on.
//
// # Errors
//
// net/rpc carries only an error's text, so a caller could tell which
// sentinel a handler returned only by comparing texts. Here a handler error
// that wraps an ErrorCoder (Drover's sentinels are structs.CodedError) is
// answered with the sentinel's code next to the text, and the ConnPool and
// Server.Call give the caller a RemoteError that errors.Is matches against
// that sentinel, however the handler wrapped it and however many servers
// forwarded it. An error without a code stays plain text. Only the answers
// of peers that send no codes at all (earlier releases) are matched by
// text, as before.
//
// # Who is calling, and for how long
//
// Every call runs with a context (see CallContextSetter) that carries a
// Peer, the remote address and, with TLS, the verified connection state, and
// that ends when the caller is gone: its stream or connection closed, or
// the server shut down. A blocking query left behind by a caller that gave
// up therefore stops at once instead of waiting out its minutes. In-process
// calls (Server.Call) copy their arguments and reply through the codec as a
// remote call would, and take their context from the caller.
//
// # Bounds
//
// Everything a peer can make the server hold is bounded: connections per
// client IP (WithMaxConnsPerClient); the time to send the connection type
// (WithHandshakeTimeout); streams per multiplexed session
// (WithMaxStreamsPerSession); calls in flight per connection, or per
// session across its streams, past which the server stops reading so the
// peer is held back by flow control; the size of one message
// (WithMaxMessageSize), the bytes that all messages being read hold at
// once (WithMaxReadBytes), and the time a message holding some of those
// bytes may take to arrive (WithMessageReadTimeout); and the time to write
// one answer (WithWriteTimeout), so a peer that sends requests and never
// reads the answers cannot pin replies and goroutines. yamux bounds what it
// buffers per stream by its receive window.
//
// Long polls (requests that implement LongPoller) travel on a session of
// their own in the ConnPool, so a server's per-session stream limit, filled
// by held blocking queries, never leaves quick calls without a stream.
//
// # Notices
//
// A server can tell a client of a change without the client holding a call
// open: an endpoint keeps the session a registration arrived on
// (SessionFromContext) and later opens a stream on it carrying one small
// notice (PushNotice). A ConnPool with PoolConfig.OnNotice accepts such
// streams and hands their payload over; a reply that implements
// SessionBinder learns when its call's session closes, so the client knows
// to register again.
//
// # Goroutines
//
// Server: each Serve call owns its listener's accept loop, one goroutine per
// connection, one per yamux stream, and one per call in progress; it waits
// for all of them before returning. ConnPool: owns an idle reaper, one
// goroutine per dial in progress and, with OnNotice, one notice accept loop
// per session; Shutdown waits for them. Calls run
// on the caller's goroutine.
package rpcx
