package rpcx

import (
	"context"
	"net"
	"net/rpc"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/yamux"
)

// gateService counts its calls and holds each until the gate opens.
type gateService struct {
	calls   atomic.Int64
	started chan struct{}
	gate    chan struct{}
}

func (g *gateService) Wait(args *EchoArgs, reply *EchoReply) error {
	g.calls.Add(1)
	select {
	case g.started <- struct{}{}:
	default:
	}
	<-g.gate
	reply.Data = make([]byte, 4<<10)
	return nil
}

// Found from outside: a peer that wrote thousands of requests on its
// streams without reading, then hung up, left the server serving every
// one of them for minutes afterwards (6 GB held, the API not answering):
// a yamux stream still yields the data it buffered after its session is
// gone, and the dispatcher went on reading it, one call after another,
// each answer failing to reach nobody. Once the session is gone, or an
// answer could not be written, nothing more is read or started.
func TestRequestsOfAPeerThatHungUpAreNotServed(t *testing.T) {
	const slots, sent = 4, 2000
	s := NewServer(nil, WithMaxStreamsPerSession(slots))
	svc := &gateService{started: make(chan struct{}, sent), gate: make(chan struct{})}
	if err := s.Register("Gate", svc); err != nil {
		t.Fatal(err)
	}
	srvConn, cliConn := net.Pipe()
	tr := newTracker()
	served := make(chan struct{})
	if !tr.goTracked(func() {
		defer close(served)
		s.serveSession(context.Background(), srvConn, Peer{}, tr)
	}) {
		t.Fatal("tracker closed")
	}

	sess, err := yamux.Client(cliConn, yamuxConfig(s.logger))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := sess.Open()
	if err != nil {
		t.Fatal(err)
	}
	cc := NewClientCodec(stream, DefaultMaxMessageSize)
	for i := range sent {
		if err := cc.WriteRequest(&rpc.Request{ServiceMethod: "Gate.Wait", Seq: uint64(i)}, &EchoArgs{}); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	// Every slot is taken by a held call; the rest wait in the server's
	// stream buffer. Then the peer hangs up without reading anything.
	for range slots {
		<-svc.started
	}
	sess.Close()
	cliConn.Close()
	<-served // the session is gone
	close(svc.gate)
	tr.wait()

	if n := svc.calls.Load(); n > slots {
		t.Fatalf("the server started %d calls of a peer that had hung up after %d were running; want no more than %d", n, slots, slots)
	}
}

// An answer to a stream that is already broken (an earlier answer timed
// out, or the peer is gone) is not encoded: a session's calls waiting to
// answer such a stream each rendered a 900 KB reply only to fail the
// write, gigabytes of garbage at once when the write timeouts fired.
func TestAnAnswerToABrokenStreamIsNotEncoded(t *testing.T) {
	srv, cli := net.Pipe()
	defer cli.Close()
	c := newMsgCodec(srv, DefaultMaxMessageSize)
	c.Close()
	body := &EchoReply{Data: make([]byte, 1<<20)}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 5 {
		if err := c.WriteResponse(&rpc.Response{ServiceMethod: "Test.Big", Seq: 1}, body); err == nil {
			t.Fatal("an answer to a closed stream reported success")
		}
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Fatalf("five answers of 1 MiB to a broken stream allocated %d bytes; want them not encoded", n)
	}
}
