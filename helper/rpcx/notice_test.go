package rpcx

import (
	"context"
	"encoding/binary"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/yamux"
)

// WatchArgs is a registration: it wants its call's context, as Drover's
// requests do, to find the session it came in on.
type WatchArgs struct {
	Name string
	ctx  context.Context
}

func (a *WatchArgs) SetCallContext(ctx context.Context) { a.ctx = ctx }

// WatchReply learns when the session its call went over closes.
type WatchReply struct {
	OK     bool
	closed <-chan struct{}
}

func (r *WatchReply) BindSession(closed <-chan struct{}) { r.closed = closed }

// watchService keeps the session of each registration by name.
type watchService struct {
	mu       sync.Mutex
	sessions map[string]*yamux.Session
}

func (s *watchService) Register(args *WatchArgs, reply *WatchReply) error {
	sess, ok := SessionFromContext(args.ctx)
	if !ok {
		return ErrNoSession
	}
	s.mu.Lock()
	s.sessions[args.Name] = sess
	s.mu.Unlock()
	reply.OK = true
	return nil
}

func (s *watchService) session(name string) *yamux.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[name]
}

// noticeSink collects the notices a pool hands over.
type noticeSink struct {
	mu  sync.Mutex
	got []string
}

func (n *noticeSink) on(addr string, payload []byte) {
	n.mu.Lock()
	n.got = append(n.got, string(payload))
	n.mu.Unlock()
}

func (n *noticeSink) list() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.got...)
}

func startWatchServer(t *testing.T) (*testServer, *watchService) {
	t.Helper()
	ts := startServer(t, "")
	svc := &watchService{sessions: map[string]*yamux.Session{}}
	if err := ts.Register("Watch", svc); err != nil {
		t.Fatal(err)
	}
	return ts, svc
}

func TestNoticeReachesTheClientOverTheSessionItRegisteredOn(t *testing.T) {
	ts, svc := startWatchServer(t)
	sink := &noticeSink{}
	pool := newTestPool(t, PoolConfig{OnNotice: sink.on})

	var reply WatchReply
	if err := pool.RPC(testCtx(t), ts.addr, "Watch.Register", &WatchArgs{Name: "n1"}, &reply); err != nil {
		t.Fatal(err)
	}
	if reply.closed == nil {
		t.Fatal("the reply was not bound to its session")
	}
	sess := svc.session("n1")
	if sess == nil {
		t.Fatal("the endpoint found no session in its call context")
	}
	for _, msg := range []string{"first", "second"} {
		if err := PushNotice(sess, []byte(msg), time.Second); err != nil {
			t.Fatalf("push %q: %v", msg, err)
		}
	}
	waitFor(t, "both notices to arrive", func() bool { return len(sink.list()) == 2 })
	if got := sink.list(); got[0] != "first" || got[1] != "second" {
		t.Fatalf("notices = %q, want [first second]", got)
	}

	// The server going away closes the session, which the reply says.
	if err := ts.stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reply.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the bound close channel did not close with the session")
	}
}

func TestNoticeSessionIsNotFoundForInProcessCalls(t *testing.T) {
	ts, _ := startWatchServer(t)
	var reply WatchReply
	err := ts.Call(context.Background(), "Watch.Register", &WatchArgs{Name: "n1"}, &reply)
	if err == nil || !strings.Contains(err.Error(), ErrNoSession.Error()) {
		t.Fatalf("in-process registration: err = %v, want %v", err, ErrNoSession)
	}
}

func TestNoticeClientClosesStreamsThatAreNotNotices(t *testing.T) {
	ts, svc := startWatchServer(t)
	sink := &noticeSink{}
	logs := &syncBuffer{}
	pool := newTestPool(t, PoolConfig{OnNotice: sink.on, NoticeTimeout: 2 * time.Second,
		Logger: hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Debug})})
	if err := pool.RPC(testCtx(t), ts.addr, "Watch.Register", &WatchArgs{Name: "n1"}, &WatchReply{}); err != nil {
		t.Fatal(err)
	}
	sess := svc.session("n1")

	// A stream of another type, and a notice claiming more than the
	// limit, are each closed unread.
	for _, head := range [][]byte{{byte(RPCStandard)}, oversizedNoticeHead()} {
		st, err := sess.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Write(head); err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
	// The accept loop goes on: a good notice still arrives, alone.
	if err := PushNotice(sess, []byte("good"), time.Second); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the good notice", func() bool { return len(sink.list()) == 1 })
	if got := sink.list(); got[0] != "good" {
		t.Fatalf("notices = %q, want [good]", got)
	}
	out := logs.String()
	if !strings.Contains(out, "only notice is accepted") || !strings.Contains(out, "at most 1024 are accepted") {
		t.Fatalf("the refused streams were not logged with why:\n%s", out)
	}
}

func oversizedNoticeHead() []byte {
	b := []byte{byte(RPCNotice), 0, 0}
	binary.BigEndian.PutUint16(b[1:], MaxNoticeSize+1)
	return b
}

func TestPushNoticeRefusesOversizedPayloads(t *testing.T) {
	a, _ := net.Pipe()
	sess, err := yamux.Server(a, yamuxConfig(hclog.NewNullLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if err := PushNotice(sess, make([]byte, MaxNoticeSize+1), time.Second); err == nil ||
		!strings.Contains(err.Error(), "larger than the 1024 allowed") {
		t.Fatalf("err = %v, want the size refused", err)
	}
}

// A peer that stopped reading (a frozen process) holds a push for the
// timeout at most, and its session is closed; a push to another peer
// meanwhile goes through at once.
func TestPushNoticeToAFrozenPeerEndsAtTheTimeout(t *testing.T) {
	frozenSrv, frozenCli := net.Pipe() // nobody ever reads frozenCli
	defer frozenCli.Close()
	frozen, err := yamux.Server(frozenSrv, yamuxConfig(hclog.NewNullLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer frozen.Close()

	ts, svc := startWatchServer(t)
	sink := &noticeSink{}
	pool := newTestPool(t, PoolConfig{OnNotice: sink.on})
	if err := pool.RPC(testCtx(t), ts.addr, "Watch.Register", &WatchArgs{Name: "live"}, &WatchReply{}); err != nil {
		t.Fatal(err)
	}

	const timeout = 500 * time.Millisecond
	frozenDone := make(chan error, 1)
	start := time.Now()
	go func() { frozenDone <- PushNotice(frozen, []byte("lost"), timeout) }()
	if err := PushNotice(svc.session("live"), []byte("live"), 5*time.Second); err != nil {
		t.Fatalf("push to the live peer: %v", err)
	}
	waitFor(t, "the live peer's notice", func() bool { return len(sink.list()) == 1 })
	select {
	case err := <-frozenDone:
		if err == nil {
			t.Fatal("a push to a peer that never reads succeeded")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a push to a frozen peer outlived its timeout by far")
	}
	if d := time.Since(start); d < timeout {
		t.Fatalf("push to the frozen peer failed after %v, before its %v timeout", d, timeout)
	}
	if !frozen.IsClosed() {
		t.Fatal("the frozen peer's session was left open")
	}
}

// A session a notice registration went over outlives the pool's idle
// timeout (its client makes no call between heartbeats minutes apart),
// but not BoundIdleTimeout: by then the registration's lease has brought
// it back into use, or the client moved to another server.
func TestPoolKeepsARegisteredSessionPastTheIdleTimeout(t *testing.T) {
	ts, _ := startWatchServer(t)
	clock := newFakeClock()
	sink := &noticeSink{}
	pool := newTestPool(t, PoolConfig{OnNotice: sink.on, IdleTimeout: time.Minute, Now: clock.Now})
	if err := pool.RPC(testCtx(t), ts.addr, "Watch.Register", &WatchArgs{Name: "n1"}, &WatchReply{}); err != nil {
		t.Fatal(err)
	}
	s := pool.session(ts.addr)

	clock.Advance(BoundIdleTimeout - time.Second)
	pool.reapIdle()
	if pool.session(ts.addr) != s || s.sess.IsClosed() {
		t.Fatal("the session a registration went over was reaped after the ordinary idle timeout")
	}
	clock.Advance(time.Second)
	pool.reapIdle()
	if pool.session(ts.addr) != nil || !s.sess.IsClosed() {
		t.Fatal("a registered session idle for BoundIdleTimeout was not reaped")
	}
}
