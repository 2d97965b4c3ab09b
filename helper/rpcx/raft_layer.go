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
// it on Shutdown. Raft's transport closes it when raft shuts down.
//
// With TLS, Dial speaks TLS to peers, and the Server hands Accept only
// connections that completed the handshake and passed its ConnAuthorizer.
type RaftLayer struct {
	addr      net.Addr
	tls       *tls.Config
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

// NewRaftLayer returns a layer that reports addr (the address peers dial,
// usually the RPC listener's address) from Addr. With tlsConfig set, Dial
// connects over TLS (see DialTLS); nil means plaintext.
func NewRaftLayer(addr net.Addr, tlsConfig *tls.Config) *RaftLayer {
	return &RaftLayer{
		addr:   addr,
		tls:    tlsConfig,
		conns:  make(chan net.Conn),
		closed: make(chan struct{}),
	}
}

// Accept waits for the next inbound raft connection.
func (l *RaftLayer) Accept() (net.Conn, error) {
	select {
	case conn := <-l.conns:
		return conn, nil
	case <-l.closed:
		return nil, fmt.Errorf("rpcx: raft layer: %w", ErrShutdown)
	}
}

// Close makes Accept fail from now on; connections that arrive afterwards
// are closed. Calling it more than once is harmless.
func (l *RaftLayer) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
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
