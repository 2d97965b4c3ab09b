package rpcx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/rpc"
	"strings"
	"sync"
	"testing"
	"time"
)

// standardClient dials a plain net/rpc connection to ts.
func standardClient(t testing.TB, ts *testServer, maxMessageSize int) *rpc.Client {
	t.Helper()
	conn, err := Dial(ts.addr, RPCStandard)
	if err != nil {
		t.Fatal(err)
	}
	c := rpc.NewClientWithCodec(NewClientCodec(conn, maxMessageSize))
	t.Cleanup(func() { c.Close() })
	return c
}

// mustEcho checks that the server at ts answers a fresh client.
func mustEcho(t testing.TB, ts *testServer) {
	t.Helper()
	var reply EchoReply
	if err := standardClient(t, ts, 0).Call("Test.Echo", &EchoArgs{Msg: "still there?"}, &reply); err != nil {
		t.Fatalf("the server no longer answers: %v", err)
	}
	if reply.Msg != "still there?" {
		t.Fatalf("wrong reply %+v", reply)
	}
}

func TestStandardConnectionRoundTrip(t *testing.T) {
	ts := startServer(t, "")
	c := standardClient(t, ts, 0)

	// net/rpc multiplexes concurrent calls on one connection by sequence
	// number; the codec must keep them apart.
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := &EchoArgs{Msg: strings.Repeat("x", i), Data: []byte{byte(i)}, N: i}
			var reply EchoReply
			if err := c.Call("Test.Echo", args, &reply); err != nil {
				t.Errorf("call %d: %v", i, err)
				return
			}
			if reply.N != i || reply.Msg != args.Msg || !bytes.Equal(reply.Data, args.Data) {
				t.Errorf("call %d: wrong reply %+v", i, reply)
			}
		}()
	}
	wg.Wait()
}

func TestMultiplexConnectionRoundTrip(t *testing.T) {
	ts := startServer(t, "")
	p := newTestPool(t, PoolConfig{})
	var reply EchoReply
	err := p.RPC(testCtx(t), ts.addr, "Test.Echo", &EchoArgs{Msg: "hello", Data: []byte{0, 1}}, &reply)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Msg != "hello" || !bytes.Equal(reply.Data, []byte{0, 1}) {
		t.Fatalf("wrong reply %+v", reply)
	}
}

func TestUnknownMethodFailsTheCallButNotTheConnection(t *testing.T) {
	ts := startServer(t, "")
	c := standardClient(t, ts, 0)
	var reply EchoReply
	err := c.Call("Test.Nope", &EchoArgs{Msg: "x"}, &reply)
	if !IsRemoteError(err) || !strings.Contains(err.Error(), "can't find method") {
		t.Fatalf("want a remote 'can't find method' error, got %v", err)
	}
	err = c.Call("Nope.Echo", map[string]any{"big": bytes.Repeat([]byte{1}, 100_000)}, &reply)
	if !IsRemoteError(err) {
		t.Fatalf("want a remote error for an unknown service, got %v", err)
	}
	if err := c.Call("Test.Echo", &EchoArgs{Msg: "next"}, &reply); err != nil || reply.Msg != "next" {
		t.Fatalf("the next call on the same connection: %v %+v", err, reply)
	}
}

func TestBodyOfTheWrongTypeFailsTheCallButNotTheConnection(t *testing.T) {
	ts := startServer(t, "")
	c := standardClient(t, ts, 0)
	var reply EchoReply
	if err := c.Call("Test.Echo", []string{"not", "a", "struct"}, &reply); !IsRemoteError(err) {
		t.Fatalf("want a remote decode error, got %v", err)
	}
	if err := c.Call("Test.Echo", &EchoArgs{Msg: "next"}, &reply); err != nil || reply.Msg != "next" {
		t.Fatalf("the next call on the same connection: %v %+v", err, reply)
	}
}

func TestRemoteHandlerErrorsComeBackAsServerErrors(t *testing.T) {
	ts := startServer(t, "")
	err := standardClient(t, ts, 0).Call("Test.Fail", &EchoArgs{}, &EchoReply{})
	if !IsRemoteError(err) {
		t.Fatalf("want rpc.ServerError, got %T %v", err, err)
	}
	// A net/rpc client reads no error code: it gets the handler's text.
	if err.Error() != errDeliberate.Error() {
		t.Fatalf("the handler's text did not come back: %v", err)
	}
	if errors.Is(err, ErrShutdown) {
		t.Fatalf("the error matches an unrelated sentinel")
	}
}

// encodeRequest renders a request as the codec would.
func encodeRequest(t testing.TB, method string, seq uint64, body any) []byte {
	t.Helper()
	h, err := Encode(rpc.Request{ServiceMethod: method, Seq: seq})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Encode(body)
	if err != nil {
		t.Fatal(err)
	}
	return append(h, b...)
}

// TestServerSurvivesHostilePeers sends bytes no honest client would and
// checks that the server closes that connection and goes on serving others.
func TestServerSurvivesHostilePeers(t *testing.T) {
	const limit = 4 << 10
	validHeader, err := Encode(rpc.Request{ServiceMethod: "Test.Echo", Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	unknownHeader, err := Encode(rpc.Request{ServiceMethod: "Test.Nope", Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	request := encodeRequest(t, "Test.Echo", 1, &EchoArgs{Msg: "hi"})

	for _, tc := range []struct {
		name  string
		send  []byte
		close bool // half-close after sending, as a peer that hangs up would
	}{
		{name: "garbage after the standard byte", send: append([]byte{0x01}, 0xc1, 0xde, 0xad, 0xbe, 0xef)},
		{name: "a header that is not a request", send: append([]byte{0x01}, 0x92, 0x01, 0x02)},
		{name: "garbage after the multiplex byte", send: []byte{0x03, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{name: "an unknown first byte", send: []byte{0x7f, 0x01, 0x02}},
		{name: "a request cut off in the header", send: append([]byte{0x01}, request[:3]...), close: true},
		{name: "a request cut off in the body", send: append([]byte{0x01}, request[:len(request)-2]...), close: true},
		{name: "a header claiming a 4 Gi element array", send: []byte{0x01, 0xdd, 0xff, 0xff, 0xff, 0xff}},
		{name: "a body claiming a 4 Gi element array", send: append(append([]byte{0x01}, validHeader...), 0xdd, 0xff, 0xff, 0xff, 0xff)},
		{name: "a body for an unknown method claiming a 4 GiB time", send: append(append([]byte{0x01}, unknownHeader...), 0xc9, 0xff, 0xff, 0xff, 0xff, 0xff)},
		{name: "a body claiming a 4 GiB string", send: append(append([]byte{0x01}, validHeader...), 0xdb, 0xff, 0xff, 0xff, 0xff)},
		{name: "a body nested too deep", send: append(append([]byte{0x01}, validHeader...), bytes.Repeat([]byte{0x91}, 1000)...)},
		{name: "a message over the size limit", send: append([]byte{0x01}, encodeRequest(t, "Test.Echo", 1, &EchoArgs{Data: make([]byte, 2*limit)})...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, "", WithMaxMessageSize(limit))
			conn, err := net.Dial("tcp", ts.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			before := totalAlloc()
			if _, err := conn.Write(tc.send); err != nil {
				t.Fatal(err)
			}
			if tc.close {
				conn.(*net.TCPConn).CloseWrite()
			}
			waitClosed(t, conn)
			if grew := totalAlloc() - before; grew > 64<<20 {
				t.Errorf("the server allocated %d MiB", grew>>20)
			}
			mustEcho(t, ts)
		})
	}
}

func TestOversizedRequestIsAnsweredWithAnErrorThenClosed(t *testing.T) {
	const limit = 4 << 10
	ts := startServer(t, "", WithMaxMessageSize(limit))
	// The client's own limit is higher, so it sends what the server refuses.
	c := standardClient(t, ts, 1<<20)
	err := c.Call("Test.Echo", &EchoArgs{Data: make([]byte, 2*limit)}, &EchoReply{})
	if err == nil {
		t.Fatal("an oversized request succeeded")
	}
	if !IsRemoteError(err) || !strings.Contains(err.Error(), ErrMessageTooLarge.Error()) {
		t.Fatalf("the caller was not told the message was too large: %v", err)
	}
	if err := c.Call("Test.Echo", &EchoArgs{}, &EchoReply{}); err == nil {
		t.Fatal("the connection still works after an oversized message")
	}
	mustEcho(t, ts)
}

func TestOversizedResponseBecomesAnError(t *testing.T) {
	const limit = 4 << 10
	ts := startServer(t, "", WithMaxMessageSize(limit))
	c := standardClient(t, ts, 1<<20)
	err := c.Call("Test.Big", &EchoArgs{N: 2 * limit}, &EchoReply{})
	if !IsRemoteError(err) || !strings.Contains(err.Error(), ErrMessageTooLarge.Error()) {
		t.Fatalf("want a remote 'too large' error, got %v", err)
	}
	var reply EchoReply
	if err := c.Call("Test.Big", &EchoArgs{N: 10}, &reply); err != nil || len(reply.Data) != 10 {
		t.Fatalf("the next call on the same connection: %v", err)
	}
}

func TestSilentConnectionIsClosedAfterTheHandshakeTimeout(t *testing.T) {
	ts := startServer(t, "", WithHandshakeTimeout(50*time.Millisecond))
	conn, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	waitClosed(t, conn)
}

func TestUnknownConnectionTypeIsLogged(t *testing.T) {
	ts := startServer(t, "")
	conn, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte{0x42})
	waitClosed(t, conn)
	waitFor(t, "the log line", func() bool { return strings.Contains(ts.logs.String(), "unknown(0x42)") })
}

func TestRaftConnectionWithoutARaftLayerIsClosed(t *testing.T) {
	ts := startServer(t, "")
	conn, err := Dial(ts.addr, RPCRaft)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	waitClosed(t, conn)
	mustEcho(t, ts)
}

func TestShutdownClosesConnectionsAndWaitsForHandlers(t *testing.T) {
	ts := startServer(t, "")
	idle, err := Dial(ts.addr, RPCStandard)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	handshaking, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer handshaking.Close()
	busy := standardClient(t, ts, 0)
	p := newTestPool(t, PoolConfig{})
	if err := p.RPC(testCtx(t), ts.addr, "Test.Echo", &EchoArgs{}, &EchoReply{}); err != nil {
		t.Fatal(err)
	}
	call := busy.Go("Test.Block", &EchoArgs{}, &EchoReply{}, nil)
	<-ts.svc.started

	stopped := make(chan error, 1)
	go func() { stopped <- ts.stop() }()
	waitClosed(t, idle)
	waitClosed(t, handshaking)
	select {
	case <-stopped:
		t.Fatal("Shutdown returned while a handler was still running")
	default:
	}
	close(ts.svc.release)
	if err := <-stopped; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	<-call.Done
	if err := ts.Serve(context.Background(), mustListen(t)); !errors.Is(err, ErrShutdown) {
		t.Fatalf("Serve after Shutdown: want ErrShutdown, got %v", err)
	}
}

func TestCancellingServeContextStopsOnlyThatListener(t *testing.T) {
	s := NewServer(nil)
	if err := s.Register("Test", newTestService()); err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	ln1, ln2 := mustListen(t), mustListen(t)
	ctx1, cancel1 := context.WithCancel(context.Background())
	done1, done2 := make(chan error, 1), make(chan error, 1)
	go func() { done1 <- s.Serve(ctx1, ln1) }()
	go func() { done2 <- s.Serve(context.Background(), ln2) }()

	conn1, err := Dial(ln1.Addr().String(), RPCStandard)
	if err != nil {
		t.Fatal(err)
	}
	defer conn1.Close()
	c1 := rpc.NewClientWithCodec(NewClientCodec(conn1, 0))
	if err := c1.Call("Test.Echo", &EchoArgs{}, &EchoReply{}); err != nil {
		t.Fatal(err)
	}
	cancel1()
	if err := <-done1; err != nil {
		t.Fatalf("Serve after its context ended: %v", err)
	}
	waitClosed(t, conn1)

	conn2, err := Dial(ln2.Addr().String(), RPCStandard)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	c2 := rpc.NewClientWithCodec(NewClientCodec(conn2, 0))
	if err := c2.Call("Test.Echo", &EchoArgs{}, &EchoReply{}); err != nil {
		t.Fatalf("the other listener stopped serving: %v", err)
	}
	s.Shutdown()
	if err := <-done2; err != nil {
		t.Fatalf("Serve after Shutdown: %v", err)
	}
}

func TestServeReportsAListenerClosedElsewhere(t *testing.T) {
	s := NewServer(nil)
	defer s.Shutdown()
	ln := mustListen(t)
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background(), ln) }()
	ln.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("want net.ErrClosed, got %v", err)
	}
}

func mustListen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func TestSessionStreamLimitBoundsCallsInProgress(t *testing.T) {
	for _, limit := range []int{1, 3} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			ts := startServer(t, "", WithMaxStreamsPerSession(limit))
			// Idle streams kept by the pool count against the limit, so
			// open a fresh one per call.
			p := newTestPool(t, PoolConfig{MaxIdleStreams: -1})
			ctx := testCtx(t)
			var wg sync.WaitGroup
			for range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 10 {
						if err := p.RPC(ctx, ts.addr, "Test.Busy", &EchoArgs{}, &EchoReply{}); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			if got := ts.svc.maxInFlight.Load(); got > int64(limit) {
				t.Fatalf("%d calls ran at once on one session, the limit is %d", got, limit)
			}
		})
	}
}
