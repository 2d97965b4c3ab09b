package rpcx

import (
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
	return dialType(addr, t, DefaultDialTimeout)
}

func dialType(addr string, t ConnType, timeout time.Duration) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, fmt.Errorf("rpcx: dial %s: %w", addr, err)
	}
	if err := writeConnType(conn, t, timeout); err != nil {
		conn.Close()
		return nil, fmt.Errorf("rpcx: dial %s: %w", addr, err)
	}
	return conn, nil
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
