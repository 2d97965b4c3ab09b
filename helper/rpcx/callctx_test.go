package rpcx

import (
	"context"
	"errors"
	"net"
	"net/rpc"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// CtxArgs receive the call context, as Drover's request types do.
type CtxArgs struct {
	Msg  string
	Poll bool
	ctx  context.Context
}

func (a *CtxArgs) SetCallContext(ctx context.Context) { a.ctx = ctx }
func (a *CtxArgs) IsLongPoll() bool                   { return a.Poll }

// ctxService is registered as "Ctx" by startCtxServer.
type ctxService struct {
	started chan Peer
	ended   chan error
	running atomic.Int64
}

// Wait blocks until its call context ends, reporting the peer when it
// starts and the context's error when it ends.
func (s *ctxService) Wait(args *CtxArgs, reply *EchoReply) error {
	s.running.Add(1)
	defer s.running.Add(-1)
	p, _ := PeerFromContext(args.ctx)
	s.started <- p
	<-args.ctx.Done()
	s.ended <- args.ctx.Err()
	return args.ctx.Err()
}

// Mutate changes its arguments, which an in-process caller must not see.
func (s *ctxService) Mutate(args *CtxArgs, reply *EchoReply) error {
	args.Msg = "changed by the handler"
	reply.Msg = "ok"
	return nil
}

func startCtxServer(t *testing.T, opts ...ServerOption) (*testServer, *ctxService) {
	t.Helper()
	ts := startServer(t, "", opts...)
	svc := &ctxService{started: make(chan Peer, 256), ended: make(chan error, 256)}
	if err := ts.Register("Ctx", svc); err != nil {
		t.Fatal(err)
	}
	return ts, svc
}

func TestCallContextEndsWhenTheCallerAbandonsItsCall(t *testing.T) {
	ts, svc := startCtxServer(t)
	p := newTestPool(t, PoolConfig{})

	ctx, cancel := context.WithCancel(testCtx(t))
	errc := make(chan error, 1)
	go func() { errc <- p.RPC(ctx, ts.addr, "Ctx.Wait", &CtxArgs{}, &EchoReply{}) }()
	peer := <-svc.started
	if peer.InProcess || peer.Addr == nil || peer.IP().String() != "127.0.0.1" {
		t.Fatalf("peer = %+v, want the pool's TCP address on 127.0.0.1", peer)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("caller got %v, want context.Canceled", err)
	}
	select {
	case err := <-svc.ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("handler's context ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler's context did not end after its caller gave up")
	}
}

func TestCallContextEndsOnShutdown(t *testing.T) {
	ts, svc := startCtxServer(t)
	p := newTestPool(t, PoolConfig{})
	go p.RPC(testCtx(t), ts.addr, "Ctx.Wait", &CtxArgs{}, &EchoReply{})
	<-svc.started
	done := make(chan struct{})
	go func() { ts.stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown waited for a handler whose call context should have ended")
	}
}

func TestInProcessCallCopiesArgumentsAndCarriesThePeer(t *testing.T) {
	ts, svc := startCtxServer(t)

	args := &CtxArgs{Msg: "mine"}
	var reply EchoReply
	if err := ts.Call(testCtx(t), "Ctx.Mutate", args, &reply); err != nil || reply.Msg != "ok" {
		t.Fatalf("Call = %v, %+v", err, reply)
	}
	if args.Msg != "mine" {
		t.Fatalf("the handler's change reached the caller's arguments: %q", args.Msg)
	}

	user := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 5555}
	ctx, cancel := context.WithCancel(WithPeer(testCtx(t), Peer{Addr: user}))
	errc := make(chan error, 1)
	go func() { errc <- ts.Call(ctx, "Ctx.Wait", &CtxArgs{}, &EchoReply{}) }()
	peer := <-svc.started
	if !peer.InProcess || peer.IP().String() != "192.0.2.7" {
		t.Fatalf("peer = %+v, want in process, for 192.0.2.7", peer)
	}
	cancel()
	<-svc.ended
	err := <-errc
	var se rpc.ServerError
	if !errors.As(err, &se) || !IsRemoteError(err) {
		t.Fatalf("a handler error came back as %T %v, want an rpc.ServerError as from a remote call", err, err)
	}
	if err := ts.Call(testCtx(t), "Ctx.Nope", &CtxArgs{}, &EchoReply{}); !IsRemoteError(err) {
		t.Fatalf("unknown method: %v", err)
	}
}

func TestLongPollsTravelOnTheirOwnSession(t *testing.T) {
	// A session serves one stream at a time here: a held long poll on a
	// shared session would leave no stream for the quick call.
	ts, svc := startCtxServer(t, WithMaxStreamsPerSession(1))
	p := newTestPool(t, PoolConfig{MaxIdleStreams: -1})

	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	go p.RPC(ctx, ts.addr, "Ctx.Wait", &CtxArgs{Poll: true}, &EchoReply{})
	<-svc.started

	quick, stop := context.WithTimeout(testCtx(t), 5*time.Second)
	defer stop()
	var reply EchoReply
	if err := p.RPC(quick, ts.addr, "Test.Echo", &EchoArgs{Msg: "hi"}, &reply); err != nil || reply.Msg != "hi" {
		t.Fatalf("a quick call behind a held long poll: %v", err)
	}
	if n := ts.accepted(); n != 2 {
		t.Fatalf("pool has %d sessions, want 2 (one for long polls)", n)
	}
}

func TestPipelinedCallsOnOneConnectionAreBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		sent int
		// ends: closing the connection ends the calls at once. With more
		// requests queued than one past the bound, the server cannot see
		// the close until it reads them, which it does only as calls end
		// by themselves (here: when the server shuts down).
		ends bool
	}{
		{"one past the bound, then closed", maxCallsPerConn + 1, true},
		{"three times the bound", 3 * maxCallsPerConn, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, svc := startCtxServer(t)
			conn, err := Dial(ts.addr, RPCStandard)
			if err != nil {
				t.Fatal(err)
			}
			client := rpc.NewClientWithCodec(NewClientCodec(conn, 0))
			defer client.Close()
			for range tc.sent {
				client.Go("Ctx.Wait", &CtxArgs{}, &EchoReply{}, make(chan *rpc.Call, 1))
			}
			waitFor(t, "the first calls to start", func() bool { return svc.running.Load() == maxCallsPerConn })
			// Give the read loop every chance to start more than it may.
			for range 1000 {
				if n := svc.running.Load(); n > maxCallsPerConn {
					t.Fatalf("%d calls running on one connection, the bound is %d", n, maxCallsPerConn)
				}
				runtime.Gosched()
			}
			conn.Close()
			if !tc.ends {
				ts.stop()
			}
			waitFor(t, "every call to end", func() bool { return svc.running.Load() == 0 })
		})
	}
}

func TestAnswersToAPeerThatNeverReadsTimeOut(t *testing.T) {
	ts := startServer(t, "", WithWriteTimeout(200*time.Millisecond))
	conn, err := Dial(ts.addr, RPCStandard)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	codec := NewClientCodec(conn, 0)
	// Ask for answers much larger than the socket buffers and never read
	// them: the server's writes block until their timeout, then it gives
	// up on the connection rather than holding the replies.
	for i := range 8 {
		if err := codec.WriteRequest(&rpc.Request{ServiceMethod: "Test.Big", Seq: uint64(i)}, &EchoArgs{N: 4 << 20}); err != nil {
			break // the server already closed it
		}
	}
	// Without reading anything: once the server has closed its end, a
	// write from this side is answered with a reset and soon fails.
	waitFor(t, "the server to close a connection whose peer does not read", func() bool {
		conn.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
		return codec.WriteRequest(&rpc.Request{ServiceMethod: "Test.Echo", Seq: 99}, &EchoArgs{}) != nil && !isTimeout(conn)
	})
}

// isTimeout reports whether a write on conn would time out now rather than
// fail: the server's buffers are full but it has not closed.
func isTimeout(conn net.Conn) bool {
	conn.SetWriteDeadline(time.Now().Add(10 * time.Millisecond))
	_, err := conn.Write([]byte{0xc0})
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestConnectionsPerClientIPAreBounded(t *testing.T) {
	ts := startServer(t, "", WithMaxConnsPerClient(2))
	var open []net.Conn
	for range 2 {
		c, err := Dial(ts.addr, RPCStandard)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
	}
	// Both are served.
	for _, c := range open {
		client := rpc.NewClientWithCodec(NewClientCodec(c, 0))
		var reply EchoReply
		if err := client.Call("Test.Echo", &EchoArgs{Msg: "x"}, &reply); err != nil {
			t.Fatal(err)
		}
	}
	third, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, third)
	waitFor(t, "the refusal to be logged", func() bool {
		return strings.Contains(ts.logs.String(), "limits.rpc_max_conns_per_client")
	})

	// Closing one frees its slot.
	open[0].Close()
	waitFor(t, "a new connection to be served after one closed", func() bool {
		c, err := Dial(ts.addr, RPCStandard)
		if err != nil {
			return false
		}
		defer c.Close()
		client := rpc.NewClientWithCodec(NewClientCodec(c, 0))
		return client.Call("Test.Echo", &EchoArgs{}, &EchoReply{}) == nil
	})
	open[1].Close()
}

func TestConnectionsOfEveryClientTogetherAreBounded(t *testing.T) {
	ts := startServer(t, "", WithMaxConns(2), WithMaxConnsPerClient(100))
	var open []net.Conn
	for range 2 {
		c, err := Dial(ts.addr, RPCStandard)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		client := rpc.NewClientWithCodec(NewClientCodec(c, 0))
		if err := client.Call("Test.Echo", &EchoArgs{}, &EchoReply{}); err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
	}
	third, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, third)
	waitFor(t, "the refusal to be logged", func() bool {
		return strings.Contains(ts.logs.String(), "limits.rpc_max_conns")
	})
	open[0].Close()
	waitFor(t, "a new connection to be served after one closed", func() bool {
		c, err := Dial(ts.addr, RPCStandard)
		if err != nil {
			return false
		}
		defer c.Close()
		return rpc.NewClientWithCodec(NewClientCodec(c, 0)).Call("Test.Echo", &EchoArgs{}, &EchoReply{}) == nil
	})
}
