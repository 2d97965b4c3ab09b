package rpcx

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// silentProxy forwards TCP connections to a server until cut, after which
// the connections it already carries forward nothing, in either direction,
// and stay open: a pulled cable, as the two ends see it. Connections made
// after the cut are carried normally.
type silentProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   chan struct{} // closed by cutAll for the connections open then
	conns []net.Conn
}

func startSilentProxy(t *testing.T, target string) *silentProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &silentProxy{ln: ln, target: target, cut: make(chan struct{})}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			c.Close()
		}
	})
	return p
}

func (p *silentProxy) addr() string { return p.ln.Addr().String() }

func (p *silentProxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		cut := p.cut
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		go pipeUntil(out, in, cut)
		go pipeUntil(in, out, cut)
	}
}

// cutAll silences every connection open now.
func (p *silentProxy) cutAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.cut)
	p.cut = make(chan struct{})
}

// pipeUntil copies src to dst until cut is closed, then reads and drops
// everything, so the sender sees no error and gets no answer.
func pipeUntil(dst io.Writer, src io.Reader, cut <-chan struct{}) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			select {
			case <-cut:
			default:
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// A call that times out on a connection that went silent makes the pool
// ping it; the ping goes unanswered, the session is closed, and the next
// call dials a new connection instead of waiting on the dead one.
func TestPoolClosesASessionThatWentSilentAfterACallTimedOut(t *testing.T) {
	ts := startServer(t, "")
	proxy := startSilentProxy(t, ts.addr)
	p := newTestPool(t, PoolConfig{})
	p.yamux.ConnectionWriteTimeout = 200 * time.Millisecond // the ping's deadline
	var reply EchoReply
	if err := p.RPC(testCtx(t), proxy.addr(), "Test.Echo", &EchoArgs{Msg: "before"}, &reply); err != nil {
		t.Fatal(err)
	}
	first := p.session(proxy.addr())

	proxy.cutAll()
	ctx, cancel := context.WithTimeout(testCtx(t), 100*time.Millisecond)
	defer cancel()
	if err := p.RPC(ctx, proxy.addr(), "Test.Echo", &EchoArgs{Msg: "lost"}, &reply); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call over a silent link: %v, want a deadline error", err)
	}
	waitFor(t, "the silent session to be closed", first.sess.IsClosed)

	if err := p.RPC(testCtx(t), proxy.addr(), "Test.Echo", &EchoArgs{Msg: "after"}, &reply); err != nil || reply.Msg != "after" {
		t.Fatalf("the call after the probe: %v %+v", err, reply)
	}
	if s := p.session(proxy.addr()); s == first {
		t.Fatal("the call after the probe used the dead session")
	}
}

// A call that times out because the server is slow leaves the session
// open: it answers the ping, and the calls on it go on.
func TestPoolKeepsASlowButLiveSessionAfterACallTimedOut(t *testing.T) {
	ts := startServer(t, "")
	p := newTestPool(t, PoolConfig{})
	p.yamux.ConnectionWriteTimeout = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(testCtx(t), 100*time.Millisecond)
	defer cancel()
	if err := p.RPC(ctx, ts.addr, "Test.Block", &EchoArgs{}, &EchoReply{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call the server holds: %v, want a deadline error", err)
	}
	s := p.session(ts.addr)
	waitFor(t, "the probe to end", func() bool { return !s.probing.Load() })
	if s.sess.IsClosed() {
		t.Fatal("a live session was closed after a slow call")
	}
	close(ts.svc.release)
	var reply EchoReply
	if err := p.RPC(testCtx(t), ts.addr, "Test.Echo", &EchoArgs{Msg: "same"}, &reply); err != nil || p.session(ts.addr) != s {
		t.Fatalf("the next call: %v, same session %v", err, p.session(ts.addr) == s)
	}
}
