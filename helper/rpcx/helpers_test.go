package rpcx

import (
	"bytes"
	"context"
	"errors"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/hashicorp/go-hclog"
)

// EchoArgs and EchoReply are the test service's message types.
type EchoArgs struct {
	Msg  string
	Data []byte
	N    int
}

type EchoReply struct {
	Msg  string
	Data []byte
	N    int
}

// errDeliberate is the test service's sentinel: an ErrorCoder, as
// Drover's sentinels are, so it keeps its identity across a call.
var errDeliberate error = &codedError{code: "rpcx.test.Deliberate", text: "test service: deliberate failure"}

// codedError is an ErrorCoder for tests (Drover's is structs.CodedError,
// which this package does not import).
type codedError struct{ code, text string }

func (e *codedError) Error() string     { return e.text }
func (e *codedError) ErrorCode() string { return e.code }

// testService is registered as "Test" on every test server.
type testService struct {
	// Block signals started, then waits for release.
	started chan struct{}
	release chan struct{}
	// Busy records the most calls it ever saw in progress at once.
	inFlight, maxInFlight atomic.Int64
}

func newTestService() *testService {
	return &testService{started: make(chan struct{}, 16), release: make(chan struct{})}
}

func (s *testService) Echo(args *EchoArgs, reply *EchoReply) error {
	*reply = EchoReply(*args)
	return nil
}

func (s *testService) Fail(args *EchoArgs, reply *EchoReply) error {
	return errDeliberate
}

func (s *testService) Block(args *EchoArgs, reply *EchoReply) error {
	s.started <- struct{}{}
	<-s.release
	reply.Msg = "released"
	return nil
}

// Busy yields a few times while counted as in progress, so calls that may
// overlap do.
func (s *testService) Busy(args *EchoArgs, reply *EchoReply) error {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		top := s.maxInFlight.Load()
		if n <= top || s.maxInFlight.CompareAndSwap(top, n) {
			break
		}
	}
	for range 100 {
		runtime.Gosched()
	}
	return nil
}

// Panic panics with args.Msg after half-writing its reply, as a buggy
// endpoint would.
func (s *testService) Panic(args *EchoArgs, reply *EchoReply) error {
	reply.Msg = "half-written"
	panic(args.Msg)
}

// Lookup dereferences whatever it finds under args.Msg without checking it
// was found: odd input makes it dereference nil.
func (s *testService) Lookup(args *EchoArgs, reply *EchoReply) error {
	known := map[string]*EchoReply{"known": {Msg: "found"}}
	reply.Msg = known[args.Msg].Msg
	return nil
}

// TypedNilError returns a nil *brokenError as a non-nil error, whose Error
// method then dereferences nil.
func (s *testService) TypedNilError(args *EchoArgs, reply *EchoReply) error {
	var err *brokenError
	return err
}

type brokenError struct{ msg string }

func (e *brokenError) Error() string { return e.msg }

// Big replies with N bytes of data.
func (s *testService) Big(args *EchoArgs, reply *EchoReply) error {
	reply.Data = make([]byte, args.N)
	return nil
}

// testServer is a Server listening on 127.0.0.1 with the test service.
type testServer struct {
	*Server
	addr    string
	svc     *testService
	logs    *syncBuffer
	served  chan error
	stopped bool
	ln      *countingListener
}

// countingListener counts the connections a test server accepted: each
// is one session a client dialed, so a test sees how many sessions a
// pool opened without looking inside the pool.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// accepted returns how many connections the server has accepted.
func (ts *testServer) accepted() int { return int(ts.ln.n.Load()) }

// startServer starts a server listening on addr ("" picks a free port). It
// is shut down when the test ends.
func startServer(t testing.TB, addr string, opts ...ServerOption) *testServer {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	return startServerOn(t, ln, opts...)
}

// startServerOn starts a server on ln.
func startServerOn(t testing.TB, ln net.Listener, opts ...ServerOption) *testServer {
	t.Helper()
	logs := &syncBuffer{}
	logger := hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Debug})
	counted := &countingListener{Listener: ln}
	ts := &testServer{
		ln:     counted,
		Server: NewServer(logger, opts...),
		addr:   ln.Addr().String(),
		svc:    newTestService(),
		logs:   logs,
		served: make(chan error, 1),
	}
	if err := ts.Register("Test", ts.svc); err != nil {
		t.Fatalf("register: %v", err)
	}
	go func() { ts.served <- ts.Serve(context.Background(), counted) }()
	t.Cleanup(func() {
		if err := ts.stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ts
}

// stop shuts the server down and returns what Serve returned. ErrShutdown
// is not a failure: a test that never reaches the server can end before
// the goroutine calling Serve has run, and Serve then refuses to start (and
// closes the listener) as documented.
func (ts *testServer) stop() error {
	if ts.stopped {
		return nil
	}
	ts.stopped = true
	ts.Shutdown()
	if err := <-ts.served; !errors.Is(err, ErrShutdown) {
		return err
	}
	return nil
}

// syncBuffer is a bytes.Buffer safe for the logger and the test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor polls cond until it holds, failing the test after 10 seconds.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	wait.Until(t, 10*time.Second, what, cond, wait.Every(time.Millisecond))
}

// waitClosed fails the test unless the peer closes conn within 10 seconds.
// Anything the server sends first is discarded.
func waitClosed(t testing.TB, conn net.Conn) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 4096)
	for {
		_, err := conn.Read(buf)
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("server did not close the connection")
		}
		return
	}
}

// newTestPool returns a pool that is shut down when the test ends.
func newTestPool(t testing.TB, cfg PoolConfig) *ConnPool {
	p := NewConnPool(cfg)
	t.Cleanup(p.Shutdown)
	return p
}

// newFakeClock is a settable clock for PoolConfig.Now.
func newFakeClock() *clock.Fake { return clock.NewFake(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) }

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
