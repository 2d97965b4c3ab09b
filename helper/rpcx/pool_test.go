package rpcx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// session returns the pool's current session for ordinary calls to addr,
// or nil.
func (p *ConnPool) session(addr string) *poolSession {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sessions[poolKey{addr: addr}]
}

func (s *poolSession) idleStreams() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.idle)
}

func TestPoolRunsConcurrentCallsOverOneSession(t *testing.T) {
	ts := startServer(t, "")
	p := newTestPool(t, PoolConfig{})
	ctx := testCtx(t)
	if err := p.RPC(ctx, ts.addr, "Test.Echo", &EchoArgs{}, &EchoReply{}); err != nil {
		t.Fatal(err)
	}
	first := p.session(ts.addr)

	const callers, calls = 32, 25
	var wg sync.WaitGroup
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				msg := fmt.Sprintf("caller %d call %d", c, i)
				var reply EchoReply
				if err := p.RPC(ctx, ts.addr, "Test.Echo", &EchoArgs{Msg: msg, N: i}, &reply); err != nil {
					t.Errorf("%s: %v", msg, err)
					return
				}
				if reply.Msg != msg || reply.N != i {
					t.Errorf("%s: got the reply %+v", msg, reply)
					return
				}
			}
		}()
	}
	wg.Wait()
	if ts.accepted() != 1 {
		t.Fatalf("the calls did not share one session")
	}
	if n := first.idleStreams(); n == 0 || n > DefaultMaxIdleStreams {
		t.Fatalf("want 1..%d idle streams kept for reuse, got %d", DefaultMaxIdleStreams, n)
	}
}

func TestPoolWithoutStreamReuseClosesEveryStream(t *testing.T) {
	ts := startServer(t, "")
	p := newTestPool(t, PoolConfig{MaxIdleStreams: -1})
	for range 3 {
		if err := p.RPC(testCtx(t), ts.addr, "Test.Echo", &EchoArgs{}, &EchoReply{}); err != nil {
			t.Fatal(err)
		}
	}
	s := p.session(ts.addr)
	if n := s.idleStreams(); n != 0 {
		t.Fatalf("kept %d streams", n)
	}
	waitFor(t, "the streams to close", func() bool { return s.sess.NumStreams() == 0 })
}

func TestPoolRedialsAfterTheServerRestarts(t *testing.T) {
	ts := startServer(t, "")
	p := newTestPool(t, PoolConfig{})
	ctx := testCtx(t)
	if err := p.RPC(ctx, ts.addr, "Test.Echo", &EchoArgs{}, &EchoReply{}); err != nil {
		t.Fatal(err)
	}
	old := p.session(ts.addr)
	if err := ts.stop(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the client to notice the server went away", old.sess.IsClosed)

	ts2 := startServer(t, ts.addr)
	var reply EchoReply
	if err := p.RPC(ctx, ts2.addr, "Test.Echo", &EchoArgs{Msg: "again"}, &reply); err != nil {
		t.Fatalf("the call after the restart: %v", err)
	}
	if reply.Msg != "again" {
		t.Fatalf("wrong reply %+v", reply)
	}
	if ts2.accepted() != 1 {
		t.Fatal("the pool kept the dead session")
	}
}

func TestPoolRedialsWhenASessionDiedUnnoticed(t *testing.T) {
	ts := startServer(t, "")
	p := newTestPool(t, PoolConfig{})
	ctx := testCtx(t)
	if err := p.RPC(ctx, ts.addr, "Test.Echo", &EchoArgs{}, &EchoReply{}); err != nil {
		t.Fatal(err)
	}
	old := p.session(ts.addr)
	old.sess.Close()
	if err := p.RPC(ctx, ts.addr, "Test.Echo", &EchoArgs{}, &EchoReply{}); err != nil {
		t.Fatalf("the call after the session died: %v", err)
	}
	if ts.accepted() != 2 {
		t.Fatal("the pool kept the dead session")
	}
}

func TestPoolReapsIdleSessions(t *testing.T) {
	ts := startServer(t, "")
	clock := newFakeClock()
	p := newTestPool(t, PoolConfig{IdleTimeout: time.Minute, Now: clock.Now})
	ctx := testCtx(t)
	if err := p.RPC(ctx, ts.addr, "Test.Echo", &EchoArgs{}, &EchoReply{}); err != nil {
		t.Fatal(err)
	}
	s := p.session(ts.addr)

	clock.Advance(59 * time.Second)
	p.reapIdle()
	if p.session(ts.addr) != s || s.sess.IsClosed() {
		t.Fatal("a session was reaped before its idle timeout")
	}

	// A call in progress keeps its session however long it takes.
	done := make(chan error, 1)
	go func() { done <- p.RPC(ctx, ts.addr, "Test.Block", &EchoArgs{}, &EchoReply{}) }()
	<-ts.svc.started
	clock.Advance(time.Hour)
	p.reapIdle()
	if p.session(ts.addr) != s {
		t.Fatal("a session with a call in progress was reaped")
	}
	close(ts.svc.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	clock.Advance(time.Minute)
	p.reapIdle()
	if p.session(ts.addr) != nil || !s.sess.IsClosed() {
		t.Fatal("an idle session was not reaped")
	}
	if err := p.RPC(ctx, ts.addr, "Test.Echo", &EchoArgs{}, &EchoReply{}); err != nil {
		t.Fatalf("the call after reaping: %v", err)
	}
}

func TestPoolCallHonoursContextCancellation(t *testing.T) {
	ts := startServer(t, "")
	p := newTestPool(t, PoolConfig{})
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	go func() { done <- p.RPC(ctx, ts.addr, "Test.Block", &EchoArgs{}, &EchoReply{}) }()
	<-ts.svc.started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	s := p.session(ts.addr)
	if n := s.idleStreams(); n != 0 {
		t.Fatalf("the abandoned stream was kept for reuse")
	}
	close(ts.svc.release)
	var reply EchoReply
	if err := p.RPC(testCtx(t), ts.addr, "Test.Echo", &EchoArgs{Msg: "after"}, &reply); err != nil || reply.Msg != "after" {
		t.Fatalf("the call after a cancelled one: %v %+v", err, reply)
	}
	waitFor(t, "the abandoned stream to close", func() bool { return s.sess.NumStreams() == 1 })
}

func TestPoolCallWithAnExpiredContextSendsNothing(t *testing.T) {
	ts := startServer(t, "")
	p := newTestPool(t, PoolConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.RPC(ctx, ts.addr, "Test.Echo", &EchoArgs{}, &EchoReply{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}

func TestPoolRemoteErrorsKeepTheStream(t *testing.T) {
	ts := startServer(t, "")
	p := newTestPool(t, PoolConfig{})
	ctx := testCtx(t)
	err := p.RPC(ctx, ts.addr, "Test.Fail", &EchoArgs{}, &EchoReply{})
	if !IsRemoteError(err) || !errors.Is(err, errDeliberate) {
		t.Fatalf("want the handler's error, got %T %v", err, err)
	}
	err = p.RPC(ctx, ts.addr, "Test.Nope", &EchoArgs{}, &EchoReply{})
	if !IsRemoteError(err) {
		t.Fatalf("want a remote error for an unknown method, got %v", err)
	}
	if n := p.session(ts.addr).idleStreams(); n != 1 {
		t.Fatalf("want the one stream kept for reuse, have %d idle", n)
	}
	if err := p.RPC(ctx, ts.addr, "Test.Echo", &EchoArgs{}, &EchoReply{}); err != nil {
		t.Fatal(err)
	}
}

func TestPoolRefusesToSendAnOversizedRequest(t *testing.T) {
	ts := startServer(t, "")
	p := newTestPool(t, PoolConfig{MaxMessageSize: 1024})
	ctx := testCtx(t)
	err := p.RPC(ctx, ts.addr, "Test.Echo", &EchoArgs{Data: make([]byte, 4096)}, &EchoReply{})
	if !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("want ErrMessageTooLarge, got %v", err)
	}
	if err := p.RPC(ctx, ts.addr, "Test.Echo", &EchoArgs{Data: make([]byte, 10)}, &EchoReply{}); err != nil {
		t.Fatalf("the next call on the same stream: %v", err)
	}
	if n := p.session(ts.addr).idleStreams(); n != 1 {
		t.Fatalf("want the one stream kept for reuse, have %d idle", n)
	}
}

func TestPoolReportsDialFailures(t *testing.T) {
	ln := mustListen(t)
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	p := newTestPool(t, PoolConfig{})
	err := p.RPC(testCtx(t), addr, "Test.Echo", &EchoArgs{}, &EchoReply{})
	var opErr *net.OpError
	if !errors.As(err, &opErr) {
		t.Fatalf("want a dial error, got %v", err)
	}
}

func TestPoolShutdownFailsCallsInProgressAndLater(t *testing.T) {
	ts := startServer(t, "")
	defer close(ts.svc.release)
	p := NewConnPool(PoolConfig{})
	done := make(chan error, 1)
	go func() { done <- p.RPC(testCtx(t), ts.addr, "Test.Block", &EchoArgs{}, &EchoReply{}) }()
	<-ts.svc.started
	p.Shutdown()
	if err := <-done; !errors.Is(err, ErrShutdown) {
		t.Fatalf("the call in progress: want ErrShutdown, got %v", err)
	}
	if err := p.RPC(testCtx(t), ts.addr, "Test.Echo", &EchoArgs{}, &EchoReply{}); !errors.Is(err, ErrShutdown) {
		t.Fatalf("a later call: want ErrShutdown, got %v", err)
	}
	p.Shutdown() // a second call is harmless
}

func TestPoolErrorsNameTheMethodAndAddress(t *testing.T) {
	ln := mustListen(t)
	addr := ln.Addr().String()
	ln.Close()
	p := newTestPool(t, PoolConfig{})
	err := p.RPC(testCtx(t), addr, "Test.Echo", &EchoArgs{}, &EchoReply{})
	if want := "rpcx: Test.Echo to " + addr + ": "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("want an error starting %q, got %v", want, err)
	}
}
