package rpcx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/rpc"
	"slices"
	"testing"

	"github.com/hashicorp/go-hclog"
	msgpackrpc "github.com/hashicorp/net-rpc-msgpackrpc/v2"
	"github.com/hashicorp/yamux"
)

// ErrArgs names the error ErrService returns.
type ErrArgs struct {
	// Code and Text make a codedError; an empty Code makes a plain one.
	Code, Text string
	// Wrap is the context the handler wraps the error in with %w.
	Wrap string
	// AlsoB makes the handler's error wrap errCodedB as well.
	AlsoB bool
}

// ErrService returns the error its caller describes, or forwards to
// another server what that one returns.
type ErrService struct {
	forwardTo string
	pool      *ConnPool
}

func (s *ErrService) Fail(args *ErrArgs, reply *EchoReply) error {
	var err error = &codedError{code: args.Code, text: args.Text}
	if args.Code == "" {
		err = errors.New(args.Text)
	}
	if args.Wrap != "" {
		err = fmt.Errorf("%s: %w", args.Wrap, err)
	}
	if args.AlsoB {
		err = fmt.Errorf("%w: %w", err, errCodedB)
	}
	return err
}

// Forward returns, wrapped, the error of the same call on another server,
// as a server forwarding a request to the leader does.
func (s *ErrService) Forward(args *ErrArgs, reply *EchoReply) error {
	err := s.pool.RPC(context.Background(), s.forwardTo, "Err.Fail", args, reply)
	return fmt.Errorf("forwarded: %w", err)
}

func startErrServer(t *testing.T, svc *ErrService) *testServer {
	t.Helper()
	ts := startServer(t, "")
	if err := ts.Register("Err", svc); err != nil {
		t.Fatalf("register: %v", err)
	}
	return ts
}

var (
	errCodedA = &codedError{code: "rpcx.test.A", text: "sentinel A"}
	errCodedB = &codedError{code: "rpcx.test.B", text: "sentinel B"}
)

func TestRemoteErrorsKeepTheirCodeAcrossACall(t *testing.T) {
	pool := newTestPool(t, PoolConfig{})
	leader := startErrServer(t, &ErrService{})
	follower := startErrServer(t, &ErrService{forwardTo: leader.addr, pool: pool})
	inProcess := func(ctx context.Context, method string, args *ErrArgs) error {
		return leader.Call(ctx, method, args, &EchoReply{})
	}
	overPool := func(ctx context.Context, method string, args *ErrArgs) error {
		return pool.RPC(ctx, leader.addr, method, args, &EchoReply{})
	}
	viaFollower := func(ctx context.Context, method string, args *ErrArgs) error {
		return pool.RPC(ctx, follower.addr, "Err.Forward", args, &EchoReply{})
	}
	callers := map[string]func(context.Context, string, *ErrArgs) error{
		"over a pooled session": overPool, "in process": inProcess, "forwarded by another server": viaFollower,
	}
	for name, call := range callers {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			for _, wrap := range []string{"", "job \"web\""} {
				err := call(ctx, "Err.Fail", &ErrArgs{Code: errCodedA.code, Text: errCodedA.text, Wrap: wrap})
				if !errors.Is(err, errCodedA) {
					t.Fatalf("wrap %q: %T %v does not match its sentinel", wrap, err, err)
				}
				if errors.Is(err, errCodedB) {
					t.Fatalf("wrap %q: %v matches another sentinel", wrap, err)
				}
				if !IsRemoteError(err) {
					t.Fatalf("wrap %q: %v is not a remote error", wrap, err)
				}
				var se rpc.ServerError
				if !errors.As(err, &se) || string(se) != err.Error() {
					t.Fatalf("wrap %q: %v does not unwrap to net/rpc's error with its text", wrap, err)
				}
				both := call(ctx, "Err.Fail", &ErrArgs{Code: errCodedA.code, Text: errCodedA.text, Wrap: wrap, AlsoB: true})
				if !errors.Is(both, errCodedA) || !errors.Is(both, errCodedB) {
					t.Fatalf("wrap %q: an error wrapping two sentinels came back as %#v", wrap, both)
				}
				if wrap != "" && err.Error() != wrap+": "+errCodedA.text && err.Error() != "forwarded: "+wrap+": "+errCodedA.text {
					t.Fatalf("wrap %q: text %q lost its context", wrap, err)
				}
			}
		})
	}
}

func TestRemoteErrorsWithoutAKnownCodeStayText(t *testing.T) {
	ts := startErrServer(t, &ErrService{})
	pool := newTestPool(t, PoolConfig{})
	ctx := testCtx(t)

	// A plain error with a sentinel's text is not the sentinel.
	err := pool.RPC(ctx, ts.addr, "Err.Fail", &ErrArgs{Text: errCodedA.text}, &EchoReply{})
	if errors.Is(err, errCodedA) || err.Error() != errCodedA.text {
		t.Fatalf("a plain error came back as %v, matching the sentinel: %v", err, errors.Is(err, errCodedA))
	}
	// A code the caller has no sentinel for matches nothing it has.
	err = pool.RPC(ctx, ts.addr, "Err.Fail", &ErrArgs{Code: "rpcx.test.Unknown", Text: errCodedA.text}, &EchoReply{})
	var re *RemoteError
	if !errors.As(err, &re) || !slices.Equal(re.Codes, []string{"rpcx.test.Unknown"}) || re.Text != errCodedA.text {
		t.Fatalf("got %#v, want the code and text as sent", err)
	}
	if errors.Is(err, errCodedA) || errors.Is(err, errCodedB) {
		t.Fatalf("an unknown code matched a sentinel: %v", err)
	}
}

// A peer of an earlier release decodes the response header into net/rpc's
// rpc.Response, and writes one without a code.
func TestRemoteErrorsWithPeersThatSendNoCode(t *testing.T) {
	t.Run("an old client gets the text", func(t *testing.T) {
		ts := startErrServer(t, &ErrService{})
		conn, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Write([]byte{byte(RPCStandard)}); err != nil {
			t.Fatal(err)
		}
		cc := NewClientCodec(conn, 0)
		args := &ErrArgs{Code: errCodedA.code, Text: errCodedA.text, Wrap: "ctx"}
		err = msgpackrpc.CallWithCodec(cc, "Err.Fail", args, &EchoReply{})
		if se, ok := err.(rpc.ServerError); !ok || string(se) != "ctx: "+errCodedA.text {
			t.Fatalf("got %T %v, want the handler's text", err, err)
		}
		if err := msgpackrpc.CallWithCodec(cc, "Test.Echo", &EchoArgs{Msg: "hi"}, &EchoReply{}); err != nil {
			t.Fatalf("the connection is out of step after the error: %v", err)
		}
	})
	t.Run("an old server's error matches by text", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		old := rpc.NewServer()
		if err := old.RegisterName("Err", &ErrService{}); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			serveOldServer(ln, old)
		}()
		t.Cleanup(func() { ln.Close(); <-done })

		pool := newTestPool(t, PoolConfig{})
		err = pool.RPC(testCtx(t), ln.Addr().String(), "Err.Fail", &ErrArgs{Code: errCodedA.code, Text: errCodedA.text, Wrap: "ctx"}, &EchoReply{})
		var re *RemoteError
		if !errors.As(err, &re) || !re.Legacy || re.Codes != nil {
			t.Fatalf("got %#v, want a remote error without a code", err)
		}
		if !errors.Is(err, errCodedA) || errors.Is(err, errCodedB) {
			t.Fatalf("%v: matches A %v (want true), B %v (want false)", err, errors.Is(err, errCodedA), errors.Is(err, errCodedB))
		}
	})
}

// serveOldServer serves ln as a server that knows no error codes would:
// multiplexed sessions, each stream served by net/rpc through the codec's
// plain rpc.ServerCodec.
func serveOldServer(ln net.Listener, srv *rpc.Server) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			b := make([]byte, 1)
			if _, err := conn.Read(b); err != nil || ConnType(b[0]) != RPCMultiplex {
				return
			}
			sess, err := yamux.Server(conn, yamuxConfig(hclog.NewNullLogger()))
			if err != nil {
				return
			}
			defer sess.Close()
			for {
				stream, err := sess.Accept()
				if err != nil {
					return
				}
				go srv.ServeCodec(NewServerCodec(stream, 0))
			}
		}()
	}
}

func TestNewRemoteErrorTakesEveryCodeInTheChain(t *testing.T) {
	err := NewRemoteError(fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", errCodedB)))
	if !slices.Equal(err.Codes, []string{errCodedB.code}) || err.Text != "outer: inner: "+errCodedB.text {
		t.Fatalf("got %+v", err)
	}
	both := NewRemoteError(fmt.Errorf("%w: %w", errCodedA, fmt.Errorf("x: %w", errCodedB)))
	if !slices.Equal(both.Codes, []string{errCodedA.code, errCodedB.code}) || !errors.Is(both, errCodedA) || !errors.Is(both, errCodedB) {
		t.Fatalf("two sentinels: %+v", both)
	}
	again := NewRemoteError(fmt.Errorf("forwarded: %w", both))
	if !slices.Equal(again.Codes, both.Codes) {
		t.Fatalf("a remote error passed on lost its codes: %+v", again)
	}
	if err := NewRemoteError(errors.New("plain")); err.Codes != nil || errors.Is(err, errCodedA) {
		t.Fatalf("a plain error got a code: %+v", err)
	}
}
