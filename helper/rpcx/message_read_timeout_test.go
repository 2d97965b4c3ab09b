package rpcx

import (
	"errors"
	"io"
	"net"
	"net/rpc"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/yamux"
)

// holdsBudget reports whether the messages being read hold at least n
// bytes of ts's read budget.
func holdsBudget(ts *testServer, n int64) bool {
	free := ts.reads.size - n + 1
	if ts.reads.sem.TryAcquire(free) {
		ts.reads.sem.Release(free)
		return false
	}
	return true
}

// A peer that sends most of a large request and then goes quiet holds
// part of the server-wide read budget. Left alone it would hold it for as
// long as it keeps its connection open, and every large message of every
// other peer would wait for room and then be refused as "server busy".
// Past the message read timeout the server tells the peer why, closes its
// connection or stream, and the bytes are free again.
func TestAMessageThatStopsArrivingGivesItsBudgetBack(t *testing.T) {
	const size = 1 << 20
	cases := []struct {
		name string
		open func(t *testing.T, ts *testServer) io.ReadWriteCloser
	}{
		{"on a plain connection", func(t *testing.T, ts *testServer) io.ReadWriteCloser {
			conn, err := Dial(ts.addr, RPCStandard)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			return conn
		}},
		{"on a stream of a session", func(t *testing.T, ts *testServer) io.ReadWriteCloser {
			conn, err := Dial(ts.addr, RPCMultiplex)
			if err != nil {
				t.Fatal(err)
			}
			sess, err := yamux.Client(conn, yamuxConfig(hclog.NewNullLogger()))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sess.Close() })
			stream, err := sess.Open()
			if err != nil {
				t.Fatal(err)
			}
			return stream
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, "", WithMaxMessageSize(size), WithMaxReadBytes(size), WithMessageReadTimeout(time.Second))

			// Most of a request whose body takes most of the budget.
			var msg []byte
			{
				c := newMsgCodec(nil, size)
				encoded, err := c.encode(&rpc.Request{ServiceMethod: "Test.Echo", Seq: 1}, &EchoArgs{Data: make([]byte, size-100<<10)})
				if err != nil {
					t.Fatal(err)
				}
				msg = append(msg, encoded[:len(encoded)-10<<10]...)
			}
			stalled := tc.open(t, ts)
			if _, err := stalled.Write(msg); err != nil {
				t.Fatal(err)
			}
			// The server reads all that arrived: the message holds it,
			// and a chunk more that waits for the rest.
			holds := int64(len(msg) - keepBufCap - readChunk)
			waitFor(t, "the stalled request holds what it sent of the read budget", func() bool { return holdsBudget(ts, holds) })

			// Another peer's large request gets room once the stalled one
			// is given up, well within the time a read waits for room.
			var reply EchoReply
			args := &EchoArgs{Data: make([]byte, size/2)}
			if err := standardClient(t, ts, size).Call("Test.Echo", args, &reply); err != nil {
				t.Fatalf("a large request while a stalled one held the budget: %v", err)
			}
			if len(reply.Data) != len(args.Data) {
				t.Fatalf("echoed %d bytes, sent %d", len(reply.Data), len(args.Data))
			}

			// The stalled peer was told why before its stream closed.
			var resp rpc.Response
			cc := NewClientCodec(stalled, size)
			if err := cc.ReadResponseHeader(&resp); err != nil {
				t.Fatalf("reading the stalled request's answer: %v", err)
			}
			if !strings.Contains(resp.Error, ErrMessageTooSlow.Error()) {
				t.Fatalf("the stalled request's answer: %q, want one saying %q", resp.Error, ErrMessageTooSlow)
			}
			_ = cc.ReadResponseBody(nil)
			if err := cc.ReadResponseHeader(&resp); !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "closed") {
				t.Fatalf("after the answer the stream should be closed, got %v", err)
			}
			if holdsBudget(ts, 1) {
				t.Fatal("the budget is still held after the stalled request was given up")
			}
		})
	}
}

// deadlineConn records the read deadlines set on a server's connection.
type deadlineConn struct {
	net.Conn
	mu   sync.Mutex
	last time.Time
	set  int
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.last, c.set = t, c.set+1
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

func (c *deadlineConn) state() (time.Time, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last, c.set
}

// deadlineListener hands out deadlineConns.
type deadlineListener struct {
	net.Listener
	conns chan *deadlineConn
}

func (l *deadlineListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	dc := &deadlineConn{Conn: c}
	l.conns <- dc
	return dc, nil
}

// The deadline covers a large message only while it arrives: once it is
// read the connection may wait for its next request as long as it likes
// (a client's session sits idle for minutes between blocking queries).
func TestTheMessageReadDeadlineEndsWithTheMessage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dl := &deadlineListener{Listener: ln, conns: make(chan *deadlineConn, 4)}
	ts := startServerOn(t, dl, WithMessageReadTimeout(time.Hour))
	c := standardClient(t, ts, 0)
	sc := <-dl.conns
	_, handshake := sc.state() // the handshake's deadline and its clearing

	var reply EchoReply
	if err := c.Call("Test.Echo", &EchoArgs{Msg: "small"}, &reply); err != nil {
		t.Fatal(err)
	}
	if _, n := sc.state(); n != handshake {
		t.Fatalf("a small request set %d read deadlines; it holds no budget and needs none", n-handshake)
	}
	if err := c.Call("Test.Echo", &EchoArgs{Data: make([]byte, 512<<10)}, &reply); err != nil {
		t.Fatal(err)
	}
	last, n := sc.state()
	// One set and one cleared; a wait for room in the read budget of a
	// millisecond or more moves the deadline on (reserve), which a
	// loaded machine can take even with the budget free.
	if n < handshake+2 {
		t.Fatalf("a large request set %d read deadlines, want one set and one cleared", n-handshake)
	}
	if !last.IsZero() {
		t.Fatalf("after a large request the connection keeps the read deadline %s", last)
	}
}
