package rpcx

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/yamux"
)

// Pool defaults; see PoolConfig.
const (
	DefaultIdleTimeout    = 2 * time.Minute
	DefaultMaxIdleStreams = 4
)

// PoolConfig configures a ConnPool. The zero value is ready to use.
type PoolConfig struct {
	// Logger receives yamux and pool logs. Nil discards them.
	Logger hclog.Logger

	// IdleTimeout closes a session that has had no call in progress for
	// this long, so a client that talked to a server once does not keep a
	// TCP connection (and a server goroutine) forever. Zero means
	// DefaultIdleTimeout; negative means never.
	IdleTimeout time.Duration

	// DialTimeout bounds connecting to a server. Zero means
	// DefaultDialTimeout.
	DialTimeout time.Duration

	// MaxMessageSize bounds one request or response. Zero means
	// DefaultMaxMessageSize. It should match the servers' setting.
	MaxMessageSize int

	// MaxIdleStreams is how many finished streams each session keeps open
	// for later calls to reuse, saving the stream open and close exchanges
	// and a server goroutine start per call. Zero means
	// DefaultMaxIdleStreams; negative means a fresh stream for every call.
	MaxIdleStreams int

	// TLS, when set, makes every session a TLS connection (see DialTLS)
	// with this config. Its callbacks may return fresh material per
	// handshake (certificates reloaded on SIGHUP); sessions already open
	// keep theirs. Nil means plaintext.
	TLS *tls.Config

	// LocalAddr, when set, is the source address of the pool's
	// connections. The servers count connections and blocking queries per
	// client IP (limits.rpc_max_conns_per_client,
	// max_blocking_queries_per_client); a node simulator gives each group
	// of simulated nodes its own loopback address so that, as for real
	// nodes, each host stays within its share. Nil lets the system choose.
	LocalAddr net.Addr

	// Now is the clock for idle accounting. Nil means time.Now; tests
	// substitute a fake.
	Now func() time.Time

	// Server-pushed notices (server heap per node, issue 16).

	// OnNotice, when set, makes the pool accept the notice streams a
	// server opens on its sessions (see PushNotice) and hands it each
	// notice's payload with the server's address. It runs on the
	// session's accept loop and must not block. Nil means server-opened
	// streams are never accepted.
	OnNotice func(addr string, payload []byte)

	// NoticeTimeout bounds reading one notice. Zero means
	// DefaultNoticeTimeout.
	NoticeTimeout time.Duration
}

// ConnPool is the client side of the transport: it keeps one multiplexed
// session per server address and runs each call on its own yamux stream, so
// any number of concurrent calls share one TCP connection without waiting
// for each other.
//
// Ownership: the pool owns its sessions and its goroutines: the idle
// reaper, one per dial in progress and, with PoolConfig.OnNotice, one
// notice accept loop per session, which ends with its session; Shutdown
// stops and waits for them. Each call's stream belongs to the calling
// goroutine until the call ends, then returns to its session's idle list
// or is closed.
type ConnPool struct {
	cfg    PoolConfig
	logger hclog.Logger
	yamux  *yamux.Config

	// ctx is cancelled by Shutdown; it stops the reaper and aborts dials.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	shutdown bool
	sessions map[poolKey]*poolSession
	dials    map[poolKey]*pendingDial
}

// poolKey names a session: one for ordinary calls and one for long polls
// per server address. Long polls (blocking queries, eval dequeues) hold a
// stream for minutes, and a server serves a bounded number of streams per
// session; on a session of their own they can never take the streams that
// quick calls need.
type poolKey struct {
	addr     string
	longPoll bool
}

// LongPoller is implemented by requests that may wait a long time for their
// answer (a blocking query with a minimum index, an eval dequeue). The pool
// sends them on a session of their own; see poolKey.
type LongPoller interface {
	IsLongPoll() bool
}

func keyFor(addr string, args any) poolKey {
	lp, ok := args.(LongPoller)
	return poolKey{addr: addr, longPoll: ok && lp.IsLongPoll()}
}

// pendingDial lets every caller that wants a session to one address wait for
// a single dial instead of each opening its own connection.
type pendingDial struct {
	done chan struct{}
	err  error // set before done is closed
}

// NewConnPool returns a pool and starts its idle reaper.
func NewConnPool(cfg PoolConfig) *ConnPool {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.MaxMessageSize <= 0 {
		cfg.MaxMessageSize = DefaultMaxMessageSize
	}
	if cfg.MaxIdleStreams == 0 {
		cfg.MaxIdleStreams = DefaultMaxIdleStreams
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NoticeTimeout <= 0 {
		cfg.NoticeTimeout = DefaultNoticeTimeout
	}
	logger := cfg.Logger.Named("rpc_pool")
	ctx, cancel := context.WithCancel(context.Background())
	p := &ConnPool{
		cfg:      cfg,
		logger:   logger,
		yamux:    yamuxConfig(logger),
		ctx:      ctx,
		cancel:   cancel,
		sessions: make(map[poolKey]*poolSession),
		dials:    make(map[poolKey]*pendingDial),
	}
	if cfg.IdleTimeout > 0 {
		p.wg.Add(1)
		go p.reapLoop(max(cfg.IdleTimeout/2, time.Second))
	}
	return p
}

// RPC calls method on the server at addr and decodes the result into reply.
//
// An error returned by the remote handler comes back as a *RemoteError,
// unwrapped, which errors.Is matches against the handler's sentinel (see
// ErrorCoder) and IsRemoteError recognises.
// Other errors are transport failures wrapped with the method and address:
// the call may or may not have run. If ctx ends first, the call's stream is
// abandoned and the error wraps ctx.Err(); the server's handler is not
// interrupted.
func (p *ConnPool) RPC(ctx context.Context, addr, method string, args, reply any) error {
	err := p.rpc(ctx, addr, method, args, reply)
	if err == nil || IsRemoteError(err) {
		return err
	}
	if p.isShutdown() && !errors.Is(err, ErrShutdown) {
		err = fmt.Errorf("%w: %w", ErrShutdown, err)
	}
	return fmt.Errorf("rpcx: %s to %s: %w", method, addr, err)
}

func (p *ConnPool) rpc(ctx context.Context, addr, method string, args, reply any) error {
	// A session can die (server restart, network) before the pool notices.
	// If opening a stream shows it dead, nothing was sent, so it is safe to
	// redial and try once more.
	for attempt := 0; ; attempt++ {
		s, err := p.acquire(ctx, keyFor(addr, args))
		if err != nil {
			if errors.Is(err, errClosedAtOnce) {
				return p.explain(ctx, false, err)
			}
			return err
		}
		cs, err := s.getStream(p.cfg.MaxMessageSize)
		if err != nil {
			p.release(s)
			p.dropIfClosed(s)
			if errors.Is(err, yamux.ErrSessionShutdown) && attempt == 0 {
				continue
			}
			return p.explain(ctx, s.answered.Load(), err)
		}
		err = cs.call(ctx, method, args, reply)
		s.putStream(cs, p.cfg.MaxIdleStreams)
		p.release(s)
		if err == nil || IsRemoteError(err) {
			s.answered.Store(true)
		}
		if err == nil && bindSession(reply, s) {
			p.mu.Lock()
			s.bound = true
			p.mu.Unlock()
		}
		if err != nil {
			p.dropIfClosed(s)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			p.probe(s)
		}
		return p.explain(ctx, s.answered.Load(), err)
	}
}

// probe pings a session on which a call ran out of time. A link that died
// silently (a pulled cable, a partition) gives no error: every later call
// on the session would wait out its own deadline, until yamux's keepalive
// noticed (up to 40 s). A session that does not answer the ping within
// yamux's ConnectionWriteTimeout is closed, so the next call dials again;
// one that answers was only slow, and stays. One probe per session at a
// time.
func (p *ConnPool) probe(s *poolSession) {
	if !s.probing.CompareAndSwap(false, true) {
		return
	}
	p.mu.Lock()
	if p.shutdown {
		p.mu.Unlock()
		s.probing.Store(false)
		return
	}
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		defer s.probing.Store(false)
		if _, err := s.sess.Ping(); err != nil && !s.sess.IsClosed() {
			p.logger.Warn("closing a connection that did not answer a ping after a call on it timed out",
				"addr", s.key.addr, "error", err)
			s.sess.Close()
		}
		p.dropIfClosed(s)
	}()
}

// explain adds why a server most likely closed a session that never got
// an answer: a server that requires TLS closes plaintext at once, and one
// that does not trust a certificate closes the TLS session right after
// the handshake (in TLS 1.3 the client learns of it only then), so on
// their own such errors read as a bare EOF.
func (p *ConnPool) explain(ctx context.Context, answered bool, err error) error {
	if err == nil || answered || ctx.Err() != nil || !closedByPeer(err) {
		return err
	}
	if p.cfg.TLS == nil {
		return fmt.Errorf("%w (the server closed the connection before answering: if it requires TLS (tls.rpc), "+
			"this agent needs tls.rpc and a certificate of the cluster's CA)", err)
	}
	return fmt.Errorf("%w (the server closed the connection before answering: it may have refused this agent's "+
		"certificate, and its log says why; check tls.ca_file and tls.cert_file)", err)
}

// acquire returns a live session to addr, dialing if there is none, and
// counts the caller as active on it until release.
func (p *ConnPool) acquire(ctx context.Context, key poolKey) (*poolSession, error) {
	// Two dials: one to replace a session found dead, one more in case the
	// new one died at once. Past that, report the failure.
	for dials := 0; ; {
		p.mu.Lock()
		if p.shutdown {
			p.mu.Unlock()
			return nil, ErrShutdown
		}
		if s, ok := p.sessions[key]; ok {
			if !s.sess.IsClosed() {
				s.active++
				p.mu.Unlock()
				return s, nil
			}
			delete(p.sessions, key)
		}
		if dials == 2 {
			p.mu.Unlock()
			return nil, fmt.Errorf("session to %s: %w", key.addr, errClosedAtOnce)
		}
		d, ok := p.dials[key]
		if !ok {
			d = &pendingDial{done: make(chan struct{})}
			p.dials[key] = d
			p.wg.Add(1)
			go p.dial(key, d)
		}
		p.mu.Unlock()
		dials++

		select {
		case <-d.done:
			if d.err != nil {
				return nil, d.err
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (p *ConnPool) release(s *poolSession) {
	now := p.cfg.Now()
	p.mu.Lock()
	s.active--
	s.lastUsed = now
	p.mu.Unlock()
}

// dropIfClosed forgets s if its session has died, so the next call redials.
func (p *ConnPool) dropIfClosed(s *poolSession) {
	if !s.sess.IsClosed() {
		return
	}
	p.mu.Lock()
	if p.sessions[s.key] == s {
		delete(p.sessions, s.key)
	}
	p.mu.Unlock()
}

// dial runs in its own goroutine so that a caller whose context ends stops
// waiting without aborting the dial for other callers. It is bounded by
// DialTimeout and by Shutdown.
func (p *ConnPool) dial(key poolKey, d *pendingDial) {
	defer p.wg.Done()
	sess, err := p.connect(key.addr)
	p.mu.Lock()
	delete(p.dials, key)
	if err == nil {
		if p.shutdown {
			sess.Close()
			err = ErrShutdown
		} else {
			p.sessions[key] = &poolSession{key: key, sess: sess, lastUsed: p.cfg.Now()}
			if p.cfg.OnNotice != nil {
				p.wg.Add(1)
				go p.acceptNotices(key.addr, sess)
			}
		}
	}
	d.err = err
	p.mu.Unlock()
	close(d.done)
}

func (p *ConnPool) connect(addr string) (*yamux.Session, error) {
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.DialTimeout)
	defer cancel()
	dialer := net.Dialer{LocalAddr: p.cfg.LocalAddr}
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if p.cfg.TLS != nil {
		if conn, err = clientTLS(ctx, conn, addr, p.cfg.TLS, p.cfg.DialTimeout); err != nil {
			return nil, err
		}
	}
	if err := writeConnType(conn, RPCMultiplex, p.cfg.DialTimeout); err != nil {
		conn.Close()
		return nil, err
	}
	sess, err := yamux.Client(conn, p.yamux)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return sess, nil
}

func (p *ConnPool) reapLoop(interval time.Duration) {
	defer p.wg.Done()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-ticker.C:
			p.reapIdle()
		}
	}
}

// BoundIdleTimeout is how long a session a notice registration went over
// may sit idle before the reaper closes it. A client registered for
// notices makes no call between its heartbeats, which at fleet size come
// minutes apart (the servers stretch the heartbeat TTL with the fleet);
// reaping its session after IdleTimeout would make it dial again and
// register again every few minutes. The registration is renewed at least
// once per lease (at most the servers' longest blocking wait, 10 minutes),
// so a session idle for longer than this one carries no live
// registration: the client moved to another server.
const BoundIdleTimeout = 15 * time.Minute

// reapIdle closes sessions that are dead, or idle for IdleTimeout by the
// pool's clock (BoundIdleTimeout for a session a notice registration went
// over).
func (p *ConnPool) reapIdle() {
	now := p.cfg.Now()
	var doomed []*poolSession
	p.mu.Lock()
	for key, s := range p.sessions {
		timeout := p.cfg.IdleTimeout
		if s.bound && timeout > 0 {
			timeout = max(timeout, BoundIdleTimeout)
		}
		idle := s.active == 0 && timeout > 0 && now.Sub(s.lastUsed) >= timeout
		if idle || s.sess.IsClosed() {
			delete(p.sessions, key)
			doomed = append(doomed, s)
		}
	}
	p.mu.Unlock()
	for _, s := range doomed {
		s.sess.Close()
	}
}

func (p *ConnPool) isShutdown() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.shutdown
}

// Shutdown closes every session, failing calls in progress, and waits for
// the pool's goroutines. Later calls return ErrShutdown.
func (p *ConnPool) Shutdown() {
	p.mu.Lock()
	if p.shutdown {
		p.mu.Unlock()
		return
	}
	p.shutdown = true
	sessions := p.sessions
	p.sessions = make(map[poolKey]*poolSession)
	p.mu.Unlock()

	p.cancel()
	for _, s := range sessions {
		s.sess.Close()
	}
	p.wg.Wait()
}

// errClosedAtOnce is acquire's error when every session it dialled died
// before it could be used.
var errClosedAtOnce = errors.New("closed as soon as it was opened")

// closedByPeer reports whether err is one of the ways a call learns that
// its session or stream was closed under it.
func closedByPeer(err error) bool {
	for _, target := range []error{errClosedAtOnce, io.EOF, io.ErrUnexpectedEOF, yamux.ErrSessionShutdown, yamux.ErrStreamClosed, yamux.ErrConnectionReset, syscall.ECONNRESET, syscall.EPIPE} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
