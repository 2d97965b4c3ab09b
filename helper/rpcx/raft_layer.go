package rpcx

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// RaftLayer carries raft traffic over the server's shared RPC port. It
// implements raft.StreamLayer, so it can be given to
// raft.NewNetworkTransport: inbound connections that start with RPCRaft are
// handed to Accept by the Server, and Dial opens connections to peers and
// announces them with the RPCRaft byte.
//
// A connection that Accept returns belongs to raft: the Server does not close
// it on Shutdown. Raft's transport closes it when its handler for the
// connection returns, but closing the transport neither closes nor waits
// for those handlers, so the layer keeps track of them: DrainAccepted
// closes what raft still holds and waits until raft has let go.
//
// With TLS, Dial speaks TLS to peers, and the Server hands Accept only
// connections that completed the handshake and passed its ConnAuthorizer.
type RaftLayer struct {
	addr      net.Addr
	tls       *tls.Config
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once

	// mu guards the connections Accept handed to raft and not yet closed
	// by it, whether the layer is closing, and idle, which is closed once
	// none is left after DrainAccepted began.
	mu       sync.Mutex
	closing  bool
	accepted map[*acceptedConn]struct{}
	idle     chan struct{}
}

// NewRaftLayer returns a layer that reports addr (the address peers dial,
// usually the RPC listener's address) from Addr. With tlsConfig set, Dial
// connects over TLS (see DialTLS); nil means plaintext.
func NewRaftLayer(addr net.Addr, tlsConfig *tls.Config) *RaftLayer {
	return &RaftLayer{
		addr:     addr,
		tls:      tlsConfig,
		conns:    make(chan net.Conn),
		closed:   make(chan struct{}),
		accepted: map[*acceptedConn]struct{}{},
	}
}

// Accept waits for the next inbound raft connection.
func (l *RaftLayer) Accept() (net.Conn, error) {
	select {
	case conn := <-l.conns:
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.closing {
			// Closed while handing it over: DrainAccepted may already
			// have looked, so raft must not get it.
			conn.Close()
			return nil, fmt.Errorf("rpcx: raft layer: %w", ErrShutdown)
		}
		c := &acceptedConn{Conn: conn, layer: l}
		l.accepted[c] = struct{}{}
		return c, nil
	case <-l.closed:
		return nil, fmt.Errorf("rpcx: raft layer: %w", ErrShutdown)
	}
}

// Close makes Accept fail from now on; connections that arrive afterwards
// are closed. Calling it more than once is harmless. Connections already
// accepted stay raft's; see DrainAccepted.
func (l *RaftLayer) Close() error {
	l.mu.Lock()
	l.closing = true
	l.mu.Unlock()
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

// DrainAccepted closes the layer, closes every accepted connection that
// raft's transport still holds, and waits up to timeout until the
// transport's handler of each has returned (it closes its connection when
// it does). It reports whether all had returned.
//
// A server calls it after raft.Shutdown and the transport's Close, before
// it closes raft's log and stable stores. Neither of those waits for the
// inbound handlers, and a handler that read a heartbeat just before raft
// shut down still runs raft's heartbeat fast path, which writes the term
// to the stable store: closing the store under it panics the process
// ("failed to save current term: database not open", hashicorp/raft#717).
// Closing the socket ends a handler that waits to read; one in the middle
// of a command finishes it first, which is what the wait is for.
func (l *RaftLayer) DrainAccepted(timeout time.Duration) bool {
	l.Close()
	l.mu.Lock()
	if len(l.accepted) == 0 {
		l.mu.Unlock()
		return true
	}
	if l.idle == nil {
		l.idle = make(chan struct{})
	}
	idle := l.idle
	held := make([]net.Conn, 0, len(l.accepted))
	for c := range l.accepted {
		held = append(held, c.Conn)
	}
	l.mu.Unlock()
	for _, conn := range held {
		conn.Close() // the socket only: raft's own Close releases it
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-idle:
		return true
	case <-t.C:
		return false
	}
}

// release forgets a connection raft has closed.
func (l *RaftLayer) release(c *acceptedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.accepted, c)
	if len(l.accepted) == 0 && l.idle != nil {
		close(l.idle)
		l.idle = nil
	}
}

// acceptedConn is a connection handed to raft; its Close, which raft's
// handler calls when it returns, tells the layer that raft let go.
type acceptedConn struct {
	net.Conn
	layer *RaftLayer
	once  sync.Once
}

func (c *acceptedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.layer.release(c) })
	return err
}

// Addr is the address raft advertises for this server.
func (l *RaftLayer) Addr() net.Addr {
	return l.addr
}

// Dial connects to a peer's RPC port and announces a raft connection.
func (l *RaftLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return dialType(string(address), RPCRaft, timeout, l.tls)
}

// handoff gives conn to whoever is blocked in Accept. It gives up, closing
// conn, if the layer or ctx is closed first: nobody would read it.
func (l *RaftLayer) handoff(ctx context.Context, conn net.Conn) {
	select {
	case l.conns <- conn:
	case <-l.closed:
		conn.Close()
	case <-ctx.Done():
		conn.Close()
	}
}
