package rpcx

import (
	"net"
	"net/rpc"
	"strings"
	"sync"
	"testing"
)

func TestPanickingMethodsFailOnlyTheirCall(t *testing.T) {
	for _, tc := range []struct {
		name    string
		method  string
		args    *EchoArgs
		wantErr string
		frame   string // the function that panicked, as the logged stack names it
	}{
		{
			name:    "a panic with a value",
			method:  "Test.Panic",
			args:    &EchoArgs{Msg: "boom"},
			wantErr: "rpc: internal error in Test.Panic: boom",
			frame:   "(*testService).Panic",
		},
		{
			name:    "a nil dereference on odd input",
			method:  "Test.Lookup",
			args:    &EchoArgs{Msg: "unknown"},
			wantErr: "rpc: internal error in Test.Lookup: runtime error: invalid memory address or nil pointer dereference",
			frame:   "(*testService).Lookup",
		},
		{
			name:    "a returned error whose Error method panics",
			method:  "Test.TypedNilError",
			args:    &EchoArgs{},
			wantErr: "rpc: internal error in Test.TypedNilError: runtime error: invalid memory address or nil pointer dereference",
			frame:   "(*brokenError).Error",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, "")
			p := newTestPool(t, PoolConfig{MaxIdleStreams: 1})
			ctx := testCtx(t)
			if err := p.RPC(ctx, ts.addr, "Test.Echo", &EchoArgs{}, &EchoReply{}); err != nil {
				t.Fatal(err)
			}
			sess := p.session(ts.addr)
			stream := sess.idle[0]

			var reply EchoReply
			err := p.RPC(ctx, ts.addr, tc.method, tc.args, &reply)
			if !IsRemoteError(err) {
				t.Fatalf("want a remote error, got %T %v", err, err)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("the error does not say what happened:\n got %v\nwant %q", err, tc.wantErr)
			}
			if reply.Msg != "" {
				t.Fatalf("the caller got the half-written reply %+v", reply)
			}

			if err := p.RPC(ctx, ts.addr, "Test.Echo", &EchoArgs{Msg: "next"}, &reply); err != nil || reply.Msg != "next" {
				t.Fatalf("the next call: %v %+v", err, reply)
			}
			if p.session(ts.addr) != sess || sess.idleStreams() != 1 || sess.idle[0] != stream {
				t.Fatal("the next call did not reuse the pooled stream")
			}

			logs := ts.logs.String()
			for _, want := range []string{"[ERROR]", "RPC handler panicked", "method=" + tc.method, "stack=", tc.frame} {
				if !strings.Contains(logs, want) {
					t.Errorf("the log does not contain %q:\n%s", want, logs)
				}
			}
		})
	}
}

// TestPanicLeavesConcurrentCallsAlone runs calls on one connection and on
// one session that are in progress while another call on them panics.
func TestPanicLeavesConcurrentCallsAlone(t *testing.T) {
	const blocked = 8
	ts := startServer(t, "")
	ctx := testCtx(t)
	c := standardClient(t, ts, 0)
	p := newTestPool(t, PoolConfig{})
	if err := p.RPC(ctx, ts.addr, "Test.Echo", &EchoArgs{}, &EchoReply{}); err != nil {
		t.Fatal(err)
	}
	sess := p.session(ts.addr)

	// Half the blocked calls share the standard connection, half have a
	// stream each on the pool's session.
	var calls []*rpc.Call
	for range blocked / 2 {
		calls = append(calls, c.Go("Test.Block", &EchoArgs{}, &EchoReply{}, nil))
	}
	var wg sync.WaitGroup
	pooled := make([]EchoReply, blocked/2)
	for i := range pooled {
		wg.Go(func() {
			if err := p.RPC(ctx, ts.addr, "Test.Block", &EchoArgs{}, &pooled[i]); err != nil {
				t.Errorf("pooled blocked call %d: %v", i, err)
			}
		})
	}
	for range blocked {
		<-ts.svc.started
	}

	// Panics on both while those wait, and other calls alongside.
	var panics sync.WaitGroup
	for i := range 16 {
		panics.Go(func() {
			err := c.Call("Test.Panic", &EchoArgs{Msg: "boom"}, &EchoReply{})
			if !IsRemoteError(err) || !strings.Contains(err.Error(), "internal error in Test.Panic") {
				t.Errorf("panic %d on the connection: got %v", i, err)
			}
			err = p.RPC(ctx, ts.addr, "Test.Panic", &EchoArgs{Msg: "boom"}, &EchoReply{})
			if !IsRemoteError(err) || !strings.Contains(err.Error(), "internal error in Test.Panic") {
				t.Errorf("panic %d on the session: got %v", i, err)
			}
			var reply EchoReply
			if err := c.Call("Test.Echo", &EchoArgs{N: i}, &reply); err != nil || reply.N != i {
				t.Errorf("echo %d on the connection: %v %+v", i, err, reply)
			}
			reply = EchoReply{}
			if err := p.RPC(ctx, ts.addr, "Test.Echo", &EchoArgs{N: i}, &reply); err != nil || reply.N != i {
				t.Errorf("echo %d on the session: %v %+v", i, err, reply)
			}
		})
	}
	panics.Wait()

	close(ts.svc.release)
	for i, call := range calls {
		<-call.Done
		if call.Error != nil || call.Reply.(*EchoReply).Msg != "released" {
			t.Errorf("blocked call %d on the connection: %v %+v", i, call.Error, call.Reply)
		}
	}
	wg.Wait()
	for i, reply := range pooled {
		if reply.Msg != "released" {
			t.Errorf("pooled blocked call %d: got %+v", i, reply)
		}
	}
	if p.session(ts.addr) != sess {
		t.Fatal("the pool had to redial")
	}
}

// netRPCClient serves the test service with net/rpc's own server over the
// package's codec, as the reference the dispatcher must match.
func netRPCClient(t *testing.T) *rpc.Client {
	t.Helper()
	srv := rpc.NewServer()
	if err := srv.RegisterName("Test", newTestService()); err != nil {
		t.Fatal(err)
	}
	serverEnd, clientEnd := net.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.ServeCodec(NewServerCodec(serverEnd, 0))
	}()
	c := rpc.NewClientWithCodec(NewClientCodec(clientEnd, 0))
	t.Cleanup(func() {
		c.Close()
		<-served
	})
	return c
}

// TestDispatcherAnswersAsNetRPCDoes sends the same calls to net/rpc's
// server and to ours and expects the same replies and error texts, which
// callers may match on.
func TestDispatcherAnswersAsNetRPCDoes(t *testing.T) {
	ts := startServer(t, "")
	ours := standardClient(t, ts, 0)
	theirs := netRPCClient(t)
	for _, tc := range []struct {
		name   string
		method string
		args   any
	}{
		{"a call that succeeds", "Test.Echo", &EchoArgs{Msg: "hi", Data: []byte{1, 2}, N: 3}},
		{"a method that fails", "Test.Fail", &EchoArgs{}},
		{"an unknown service", "Nope.Echo", &EchoArgs{}},
		{"an unknown method", "Test.Nope", &EchoArgs{}},
		{"a name without a dot", "Echo", &EchoArgs{}},
		{"a body of the wrong type", "Test.Echo", []string{"not", "a", "struct"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ourReply, theirReply EchoReply
			ourErr := ours.Call(tc.method, tc.args, &ourReply)
			theirErr := theirs.Call(tc.method, tc.args, &theirReply)
			if errText(ourErr) != errText(theirErr) {
				t.Fatalf("errors differ:\n ours   %v\n net/rpc %v", ourErr, theirErr)
			}
			if IsRemoteError(ourErr) != IsRemoteError(theirErr) {
				t.Fatalf("error kinds differ: ours %T, net/rpc %T", ourErr, theirErr)
			}
			if !equalReplies(ourReply, theirReply) {
				t.Fatalf("replies differ: ours %+v, net/rpc %+v", ourReply, theirReply)
			}
			// Both connections still serve.
			if err := ours.Call("Test.Echo", &EchoArgs{}, &EchoReply{}); err != nil {
				t.Fatalf("our connection stopped serving: %v", err)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func equalReplies(a, b EchoReply) bool {
	return a.Msg == b.Msg && a.N == b.N && string(a.Data) == string(b.Data)
}

// TestArgumentAndReplyShapes calls methods that take their argument by
// value and reply with a map or a slice, which net/rpc allows.
func TestArgumentAndReplyShapes(t *testing.T) {
	ts := startServer(t, "")
	if err := ts.Register("Shapes", shapes{}); err != nil {
		t.Fatal(err)
	}
	c := standardClient(t, ts, 0)

	var sum int
	if err := c.Call("Shapes.Sum", []int{1, 2, 3}, &sum); err != nil || sum != 6 {
		t.Fatalf("Sum: %v %d", err, sum)
	}
	var counts map[string]int
	if err := c.Call("Shapes.Count", EchoArgs{Msg: "abc", N: 2}, &counts); err != nil || counts["abc"] != 2 {
		t.Fatalf("Count: %v %v", err, counts)
	}
	var keys []string
	if err := c.Call("Shapes.Keys", map[string]int{"b": 1, "a": 2}, &keys); err != nil || strings.Join(keys, ",") != "a,b" {
		t.Fatalf("Keys: %v %v", err, keys)
	}
}

// shapes is registered by value: every method has a value receiver.
type shapes struct{}

func (shapes) Sum(args []int, reply *int) error {
	for _, n := range args {
		*reply += n
	}
	return nil
}

// Count writes into the reply map without making it: the dispatcher must
// hand it a non-nil one.
func (shapes) Count(args EchoArgs, reply *map[string]int) error {
	(*reply)[args.Msg] = args.N
	return nil
}

// Keys appends to the reply slice, in order.
func (shapes) Keys(args map[string]int, reply *[]string) error {
	for _, k := range []string{"a", "b"} {
		if _, ok := args[k]; ok {
			*reply = append(*reply, k)
		}
	}
	return nil
}
