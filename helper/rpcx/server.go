package rpcx

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/yamux"
)

// DefaultHandshakeTimeout is how long a new connection may take to send its
// connection-type byte before the server gives up on it, so a silent peer
// cannot hold a goroutine and a file descriptor forever.
const DefaultHandshakeTimeout = 10 * time.Second

// DefaultMaxStreamsPerSession bounds how many streams one multiplexed
// session may have open and being served at once, so one client cannot start
// unbounded goroutines. A stream carries one call at a time, and a ConnPool
// keeps up to PoolConfig.MaxIdleStreams finished streams open, so this must
// stay well above that. Past the limit the server stops accepting streams on
// that session until one closes; new streams wait in yamux's accept backlog
// and are refused once it fills.
const DefaultMaxStreamsPerSession = 1024

// Server serves RPC endpoints (written as for net/rpc, see Register), and
// hands raft connections to a RaftLayer, on one listening port. See the
// package documentation for the wire format.
//
// Ownership: each Serve call owns its listener, the connections it accepted,
// and the goroutines serving them (one per connection, one per yamux stream,
// and one per call in progress). When Serve's context ends or Shutdown is
// called, it closes the listener and every connection, then waits for those
// goroutines. A handler that blocks forever therefore blocks shutdown: a
// handler is not told its caller has gone, so long waits (blocking queries)
// must also watch a context that the owner of the Server cancels before
// shutting it down.
type Server struct {
	services registry
	logger   hclog.Logger
	cfg      serverConfig
	yamux    *yamux.Config

	// reads is the byte budget shared by every connection's message reads,
	// writes the one for answers waiting to be written.
	reads  *readBudget
	writes *writeBudget
	// conns counts open connections per client IP.
	conns *connLimiter
	// refusals logs refused connections, rate-limited per client IP.
	refusals *refusalLog

	// ctx is cancelled by Shutdown and stops every Serve.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	shutdown bool
	serving  sync.WaitGroup
}

type serverConfig struct {
	maxMessageSize    int
	handshakeTimeout  time.Duration
	maxStreams        int
	maxConnsPerClient int
	maxConns          int
	maxReadBytes      int64
	// maxPendingWriteBytes: see DefaultMaxPendingWriteBytes.
	maxPendingWriteBytes int64
	writeTimeout         time.Duration
	raft                 *RaftLayer
	tls                  *tls.Config
	authorize            ConnAuthorizer
	// observe is told of every call answered (WithCallObserver).
	observe func(method string, failed bool)
	// messageReadTimeout: see DefaultMessageReadTimeout.
	messageReadTimeout time.Duration
}

// DefaultMaxConnsPerClient bounds the connections one client IP may hold
// open at once (Nomad's limits.rpc_max_conns_per_client default), so one
// host cannot exhaust the server's file descriptors with idle sessions.
const DefaultMaxConnsPerClient = 100

// DefaultWriteTimeout bounds writing one answer. A peer that sends
// requests and never reads their answers would otherwise hold a goroutine
// and a reply per call for as long as it likes.
const DefaultWriteTimeout = 30 * time.Second

// DefaultMessageReadTimeout bounds how long a message may take to arrive
// once it holds part of the read budget (past its first 64 KiB): the
// budget is shared by every connection, and a peer that sends most of a
// few large messages and then goes quiet would otherwise keep every other
// large message out, for as long as it kept its connections open. Smaller
// messages take no budget and have no deadline. It is the write timeout's
// bound on the way in: a peer that cannot send a message in this time
// could not receive one either.
const DefaultMessageReadTimeout = DefaultWriteTimeout

// maxCallsPerConn bounds the calls in flight on one plain connection.
// net/rpc clients pipeline calls on a connection; past this many the
// server stops reading until one finishes. A multiplexed session shares
// one bound of its stream limit across all its streams instead.
const maxCallsPerConn = 64

// ServerOption changes a Server's configuration.
type ServerOption func(*serverConfig)

// WithMaxMessageSize bounds the size of one request (header plus body) a
// peer may send, and of one response the server will send. A peer that
// exceeds it gets an error and its connection or stream closed.
func WithMaxMessageSize(n int) ServerOption {
	return func(c *serverConfig) { c.maxMessageSize = n }
}

// WithHandshakeTimeout sets how long a connection may take to send its
// connection-type byte.
func WithHandshakeTimeout(d time.Duration) ServerOption {
	return func(c *serverConfig) { c.handshakeTimeout = d }
}

// WithMaxStreamsPerSession bounds the streams open and being served on one
// multiplexed session; see DefaultMaxStreamsPerSession.
func WithMaxStreamsPerSession(n int) ServerOption {
	return func(c *serverConfig) { c.maxStreams = n }
}

// WithMaxConnsPerClient bounds the connections one client IP may have open;
// a connection past the limit is closed at once. Zero or less means
// DefaultMaxConnsPerClient.
func WithMaxConnsPerClient(n int) ServerOption {
	return func(c *serverConfig) { c.maxConnsPerClient = n }
}

// WithCallObserver has f told of every call the server answers, over the
// network or in process, with whether it failed: the server's request
// and error counters. f runs on the call's goroutine and must be quick.
func WithCallObserver(f func(method string, failed bool)) ServerOption {
	return func(c *serverConfig) { c.observe = f }
}

// WithMaxConns bounds the connections open at once from every client
// together; a connection past it is closed at once. Zero or less means
// DefaultMaxConns().
func WithMaxConns(n int) ServerOption {
	return func(c *serverConfig) { c.maxConns = n }
}

// WithMaxReadBytes sets the server-wide budget of bytes that messages being
// read may hold (see DefaultMaxReadBytes).
func WithMaxReadBytes(n int64) ServerOption {
	return func(c *serverConfig) { c.maxReadBytes = n }
}

// WithMaxPendingWriteBytes sets the server-wide budget of bytes that
// encoded answers waiting to be written may hold (see
// DefaultMaxPendingWriteBytes).
func WithMaxPendingWriteBytes(n int64) ServerOption {
	return func(c *serverConfig) { c.maxPendingWriteBytes = n }
}

// WithWriteTimeout bounds writing one answer to a peer.
func WithWriteTimeout(d time.Duration) ServerOption {
	return func(c *serverConfig) { c.writeTimeout = d }
}

// WithMessageReadTimeout bounds how long a message that holds part of the
// read budget may take to arrive (see DefaultMessageReadTimeout). A peer
// whose message is not whole by then is told why and its connection or
// stream is closed, which gives the bytes back.
func WithMessageReadTimeout(d time.Duration) ServerOption {
	return func(c *serverConfig) { c.messageReadTimeout = d }
}

// WithRaftLayer routes RPCRaft connections to l. Without it they are closed.
func WithRaftLayer(l *RaftLayer) ServerOption {
	return func(c *serverConfig) { c.raft = l }
}

// WithTLS makes the server require TLS on every connection: the first
// byte must be RPCTLS, the handshake must finish within the handshake
// timeout, and cfg decides which client certificates are good (it should
// require and verify one). A connection that starts with any other byte is
// closed before anything else is read. Every call then carries the
// verified connection state in its Peer.
func WithTLS(cfg *tls.Config) ServerOption {
	return func(c *serverConfig) { c.tls = cfg }
}

// ConnAuthorizer decides whether a peer may open a connection of a type,
// once the type is known (inside TLS, after the handshake) and before any
// byte of it is served. An error closes the connection and is logged.
type ConnAuthorizer func(t ConnType, p Peer) error

// WithConnAuthorizer installs fn to vet every connection. A server uses it
// to let only server certificates speak raft: raft has no authentication
// of its own, so whoever reaches it can rewrite the log.
func WithConnAuthorizer(fn ConnAuthorizer) ServerOption {
	return func(c *serverConfig) { c.authorize = fn }
}

// NewServer returns a Server with no endpoints registered. A nil logger
// discards logs.
func NewServer(logger hclog.Logger, opts ...ServerOption) *Server {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	cfg := serverConfig{
		maxMessageSize:   DefaultMaxMessageSize,
		handshakeTimeout: DefaultHandshakeTimeout,
		maxStreams:       DefaultMaxStreamsPerSession,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.maxMessageSize <= 0 {
		cfg.maxMessageSize = DefaultMaxMessageSize
	}
	if cfg.handshakeTimeout <= 0 {
		cfg.handshakeTimeout = DefaultHandshakeTimeout
	}
	if cfg.maxStreams <= 0 {
		cfg.maxStreams = DefaultMaxStreamsPerSession
	}
	if cfg.maxConnsPerClient <= 0 {
		cfg.maxConnsPerClient = DefaultMaxConnsPerClient
	}
	if cfg.maxConns <= 0 {
		cfg.maxConns = DefaultMaxConns()
	}
	if cfg.maxReadBytes <= 0 {
		cfg.maxReadBytes = DefaultMaxReadBytes
	}
	if cfg.maxReadBytes < int64(cfg.maxMessageSize) {
		// One message of the largest size must always fit.
		cfg.maxReadBytes = int64(cfg.maxMessageSize)
	}
	if cfg.maxPendingWriteBytes <= 0 {
		cfg.maxPendingWriteBytes = DefaultMaxPendingWriteBytes
	}
	if cfg.maxPendingWriteBytes < int64(cfg.maxMessageSize) {
		// One answer of the largest size must always fit.
		cfg.maxPendingWriteBytes = int64(cfg.maxMessageSize)
	}
	if cfg.writeTimeout <= 0 {
		cfg.writeTimeout = DefaultWriteTimeout
	}
	if cfg.messageReadTimeout <= 0 {
		cfg.messageReadTimeout = DefaultMessageReadTimeout
	}
	logger = logger.Named("rpc")
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		logger:   logger,
		cfg:      cfg,
		yamux:    yamuxConfig(logger),
		reads:    newReadBudget(ctx, cfg.maxReadBytes),
		writes:   newWriteBudget(cfg.maxPendingWriteBytes),
		conns:    newConnLimiter(cfg.maxConnsPerClient, cfg.maxConns, logger),
		refusals: newRefusalLog(logger),
		ctx:      ctx,
		cancel:   cancel,
	}
}

// Register publishes rcvr's suitable methods as "name.Method". A suitable
// method is one net/rpc would serve:
//
//	func (t *T) Method(args *A, reply *R) error
//
// exported, with A and R exported or builtin (args may also be a value).
// Other methods are skipped; a receiver with none is an error. A method that
// panics fails only its own call (see serveCodec).
func (s *Server) Register(name string, rcvr any) error {
	if err := s.services.register(name, rcvr); err != nil {
		return fmt.Errorf("rpcx: register %q: %w", name, err)
	}
	return nil
}

// Serve accepts connections on ln until ctx ends or Shutdown is called, then
// closes ln and every connection it accepted and returns once all their
// goroutines have exited. It returns nil after such an orderly stop,
// ErrShutdown if the server was already shut down, or the error that made
// accepting impossible. It may be called for several listeners at once.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		ln.Close()
		return ErrShutdown
	}
	s.serving.Add(1)
	s.mu.Unlock()
	defer s.serving.Done()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopLink := context.AfterFunc(s.ctx, cancel)
	defer stopLink()

	t := newTracker()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		<-ctx.Done()
		ln.Close()
		t.closeAll()
	}()

	err := s.acceptLoop(ctx, ln, t)
	cancel()
	<-closed
	t.wait()
	return err
}

// Shutdown stops every Serve call and waits for them to finish. Later Serve
// calls return ErrShutdown.
func (s *Server) Shutdown() {
	s.mu.Lock()
	s.shutdown = true
	s.mu.Unlock()
	s.cancel()
	s.serving.Wait()
}

func (s *Server) acceptLoop(ctx context.Context, ln net.Listener, t *tracker) error {
	const minDelay, maxDelay = 5 * time.Millisecond, time.Second
	var delay time.Duration
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("rpcx: accept: %w", err)
			}
			// Most likely out of file descriptors: back off and retry
			// rather than spin.
			delay = min(max(2*delay, minDelay), maxDelay)
			s.logger.Error("failed to accept connection", "error", err, "retry_in", delay)
			timer := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil
			case <-timer.C:
			}
			continue
		}
		delay = 0
		release, ok := s.conns.admit(conn.RemoteAddr())
		if !ok {
			conn.Close()
			continue
		}
		conn = &limitedConn{Conn: conn, release: release}
		if !t.add(conn) {
			conn.Close()
			return nil
		}
		if !t.goTracked(func() { s.handleConn(ctx, conn, t) }) {
			t.remove(conn)
			conn.Close()
			return nil
		}
	}
}

// handleConn reads the connection-type byte (and, for TLS, runs the
// handshake and reads the inner type), vets the peer, and dispatches.
// Everything before dispatch shares one deadline, the handshake timeout,
// so a peer that stalls anywhere in it is dropped. conn is registered with
// t on entry; each branch decides who closes it.
func (s *Server) handleConn(ctx context.Context, conn net.Conn, t *tracker) {
	raw := conn
	drop := func() {
		t.remove(raw)
		raw.Close()
	}
	if err := raw.SetDeadline(time.Now().Add(s.cfg.handshakeTimeout)); err != nil {
		drop()
		return
	}
	typ, err := readConnType(raw)
	if err != nil {
		s.logger.Debug("connection closed before sending its type", "remote", raw.RemoteAddr(), "error", err)
		drop()
		return
	}
	peer := Peer{Addr: raw.RemoteAddr()}
	switch {
	case typ == RPCTLS && s.cfg.tls == nil:
		s.refusals.warn(raw.RemoteAddr(), "refusing TLS connection: this server does not have TLS enabled (tls.rpc)")
		drop()
		return
	case typ == RPCTLS:
		tc := tls.Server(raw, s.cfg.tls)
		if err := tc.Handshake(); err != nil {
			s.refusals.warn(raw.RemoteAddr(), "refusing connection: TLS handshake failed", "error", err)
			drop()
			return
		}
		state := tc.ConnectionState()
		peer.TLS = &state
		if typ, err = readConnType(tc); err != nil {
			s.logger.Debug("TLS connection closed before sending its type", "remote", raw.RemoteAddr(), "error", err)
			drop()
			return
		}
		t.remove(raw)
		if !t.add(tc) {
			raw.Close()
			return
		}
		conn = tc
		drop = func() {
			t.remove(tc)
			raw.Close()
		}
	case s.cfg.tls != nil:
		// Nothing past the first byte is read from a plaintext peer.
		s.refusals.warn(raw.RemoteAddr(), "refusing plaintext connection: this server requires TLS (tls.rpc)", "type", typ)
		drop()
		return
	}
	if s.cfg.authorize != nil && typ != RPCTLS {
		if err := s.cfg.authorize(typ, peer); err != nil {
			s.refusals.warn(raw.RemoteAddr(), "refusing connection", "type", typ, "error", err)
			drop()
			return
		}
	}
	if err := raw.SetDeadline(time.Time{}); err != nil {
		drop()
		return
	}
	switch typ {
	case RPCStandard:
		s.serveCodec(WithPeer(ctx, peer), conn, peer, make(chan struct{}, maxCallsPerConn)) // closes conn when done
		t.remove(conn)
	case RPCMultiplex:
		s.serveSession(ctx, conn, peer, t)
	case RPCRaft:
		t.remove(conn)
		if s.cfg.raft == nil {
			s.logger.Warn("closing raft connection: this server has no raft layer", "remote", raw.RemoteAddr())
			conn.Close()
			return
		}
		s.cfg.raft.handoff(ctx, conn)
	default:
		// Unknown, or TLS inside TLS.
		s.refusals.warn(raw.RemoteAddr(), "closing connection of unknown type", "type", typ)
		drop()
	}
}

// readConnType reads the connection-type byte. The caller sets the
// deadline.
func readConnType(conn net.Conn) (ConnType, error) {
	var b [1]byte
	if _, err := io.ReadFull(conn, b[:]); err != nil {
		return 0, err
	}
	return ConnType(b[0]), nil
}

// serveSession runs a yamux session over conn and serves each stream the
// client opens as its own net/rpc connection. The streams' context ends
// with the session, so requests a peer left in their buffers when it hung
// up are not served.
func (s *Server) serveSession(ctx context.Context, conn net.Conn, peer Peer, t *tracker) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer t.remove(conn)
	sess, err := yamux.Server(conn, s.yamux)
	if err != nil {
		s.logger.Error("failed to start multiplexed session", "remote", conn.RemoteAddr(), "error", err)
		conn.Close()
		return
	}
	defer sess.Close()
	if !t.add(sess) {
		return
	}
	defer t.remove(sess)

	slots := make(chan struct{}, s.cfg.maxStreams)
	calls := make(chan struct{}, s.cfg.maxStreams)
	// The session travels with each call so that an endpoint can push
	// notices back to its caller later (see SessionFromContext).
	peerCtx := withSession(WithPeer(ctx, peer), sess)
	for {
		stream, err := sess.AcceptStream()
		if err != nil {
			if !sess.IsClosed() {
				s.logger.Debug("multiplexed session ended", "remote", conn.RemoteAddr(), "error", err)
			}
			return
		}
		select {
		case slots <- struct{}{}:
		case <-sess.CloseChan():
			stream.Close()
			return
		}
		started := t.goTracked(func() {
			defer func() { <-slots }()
			s.serveCodec(peerCtx, stream, peer, calls)
		})
		if !started {
			stream.Close()
			return
		}
	}
}
