package rpcx

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// ConnType is the first byte a client writes on a new connection to a server
// port. It tells the server's accept loop which protocol follows.
type ConnType byte

// The connection types. The values are part of the wire format: never
// renumber them.
const (
	// RPCStandard: one net/rpc connection with the msgpack codec.
	RPCStandard ConnType = 0x01
	// RPCRaft: hashicorp/raft traffic, handed to the RaftLayer.
	RPCRaft ConnType = 0x02
	// RPCMultiplex: a yamux session; every stream the client opens is one
	// net/rpc connection with the msgpack codec.
	RPCMultiplex ConnType = 0x03
	// RPCTLS: a TLS handshake follows, then, inside TLS, one of the
	// types above. A server with TLS required accepts nothing else.
	RPCTLS ConnType = 0x04

	// Server-pushed notices (server heap per node, issue 16).

	// RPCNotice starts a stream that a server opens on a client's
	// multiplexed session to carry one notice (see PushNotice). It is
	// never the first byte of a connection: a server closes a
	// connection that starts with it, as any unknown type.
	RPCNotice ConnType = 0x05
)

// String names the connection type for logs.
func (t ConnType) String() string {
	switch t {
	case RPCStandard:
		return "standard"
	case RPCRaft:
		return "raft"
	case RPCMultiplex:
		return "multiplex"
	case RPCTLS:
		return "tls"
	case RPCNotice:
		return "notice"
	default:
		return fmt.Sprintf("unknown(0x%02x)", byte(t))
	}
}

// DefaultDialTimeout bounds how long establishing a TCP connection may take.
const DefaultDialTimeout = 10 * time.Second

// Dial connects to a server port and announces the connection type. The
// caller owns the returned connection. It is meant for tests and tools; the
// ConnPool is what agents use.
func Dial(addr string, t ConnType) (net.Conn, error) {
	return dialType(addr, t, DefaultDialTimeout, nil)
}

// DialTLS is Dial over TLS with cfg: it announces RPCTLS, completes the
// handshake, then announces t inside TLS.
func DialTLS(addr string, t ConnType, cfg *tls.Config) (net.Conn, error) {
	return dialType(addr, t, DefaultDialTimeout, cfg)
}

// dialType connects to addr and announces t, over TLS when tlsCfg is set.
// timeout bounds each step (connecting, the TLS handshake, the writes).
func dialType(addr string, t ConnType, timeout time.Duration, tlsCfg *tls.Config) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, fmt.Errorf("rpcx: dial %s: %w", addr, err)
	}
	if tlsCfg != nil {
		if conn, err = clientTLS(context.Background(), conn, addr, tlsCfg, timeout); err != nil {
			return nil, fmt.Errorf("rpcx: dial %s: %w", addr, err)
		}
	}
	if err := writeConnType(conn, t, timeout); err != nil {
		conn.Close()
		return nil, fmt.Errorf("rpcx: dial %s: %w", addr, err)
	}
	return conn, nil
}

// clientTLS announces RPCTLS on conn and runs the client side of the TLS
// handshake, bounded by timeout and ctx. On error conn is closed.
func clientTLS(ctx context.Context, conn net.Conn, addr string, cfg *tls.Config, timeout time.Duration) (net.Conn, error) {
	if err := writeConnType(conn, RPCTLS, timeout); err != nil {
		conn.Close()
		return nil, err
	}
	if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
		// Go checks the name the caller dialled unless told otherwise.
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	tc := tls.Client(conn, cfg)
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	return tc, nil
}

// writeConnType writes the demultiplexing byte. The write deadline keeps a
// peer that accepts but never reads from stalling the dialer.
func writeConnType(conn net.Conn, t ConnType, timeout time.Duration) error {
	if timeout > 0 {
		if err := conn.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
			return err
		}
		defer conn.SetWriteDeadline(time.Time{})
	}
	_, err := conn.Write([]byte{byte(t)})
	return err
}
