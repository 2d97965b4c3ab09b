package rpcx

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// startRaftServer starts a server whose RaftLayer advertises its listener.
func startRaftServer(t *testing.T) (*testServer, *RaftLayer) {
	t.Helper()
	ln := mustListen(t)
	layer := NewRaftLayer(ln.Addr(), nil)
	ts := startServerOn(t, ln, WithRaftLayer(layer))
	t.Cleanup(func() { layer.Close() })
	return ts, layer
}

func TestRaftLayerDialAndAcceptMeet(t *testing.T) {
	ts, layer := startRaftServer(t)
	if layer.Addr().String() != ts.addr {
		t.Fatalf("Addr: want %s, got %s", ts.addr, layer.Addr())
	}

	accepted := make(chan net.Conn, 1)
	go func() {
		conn, err := layer.Accept()
		if err != nil {
			t.Errorf("Accept: %v", err)
		}
		accepted <- conn
	}()
	out, err := layer.Dial(raft.ServerAddress(ts.addr), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	// Bytes that would be garbage to RPC go to raft untouched.
	if _, err := out.Write([]byte{0xc1, 'p', 'i', 'n', 'g'}); err != nil {
		t.Fatal(err)
	}
	in := <-accepted
	if in == nil {
		t.FailNow()
	}
	defer in.Close()
	buf := make([]byte, 5)
	if _, err := io.ReadFull(in, buf); err != nil || string(buf[1:]) != "ping" || buf[0] != 0xc1 {
		t.Fatalf("read %q, %v", buf, err)
	}
	if _, err := in.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(out, buf[:4]); err != nil || string(buf[:4]) != "pong" {
		t.Fatalf("read %q, %v", buf[:4], err)
	}
	// The server has let go of the connection: shutting it down must not
	// close raft's connections.
	if err := ts.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Write([]byte("more")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(out, buf[:4]); err != nil || string(buf[:4]) != "more" {
		t.Fatalf("after server shutdown: read %q, %v", buf[:4], err)
	}
}

func TestRaftLayerCloseStopsAccept(t *testing.T) {
	ts, layer := startRaftServer(t)
	layer.Close()
	layer.Close()
	if _, err := layer.Accept(); !errors.Is(err, ErrShutdown) {
		t.Fatalf("want ErrShutdown, got %v", err)
	}
	conn, err := Dial(ts.addr, RPCRaft)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	waitClosed(t, conn)
}

// TestRaftTransportsTalkThroughTheLayer runs a real raft RPC between two
// NetworkTransports whose stream layers share the RPC ports.
func TestRaftTransportsTalkThroughTheLayer(t *testing.T) {
	_, layer1 := startRaftServer(t)
	_, layer2 := startRaftServer(t)
	trans1 := raft.NewNetworkTransport(layer1, 2, 5*time.Second, io.Discard)
	defer trans1.Close()
	trans2 := raft.NewNetworkTransport(layer2, 2, 5*time.Second, io.Discard)
	defer trans2.Close()

	go func() {
		rpc := <-trans2.Consumer()
		req := rpc.Command.(*raft.RequestVoteRequest)
		rpc.Respond(&raft.RequestVoteResponse{Term: req.Term, Granted: true}, nil)
	}()
	var resp raft.RequestVoteResponse
	req := raft.RequestVoteRequest{RPCHeader: raft.RPCHeader{Addr: []byte(trans1.LocalAddr())}, Term: 7}
	if err := trans1.RequestVote("2", trans2.LocalAddr(), &req, &resp); err != nil {
		t.Fatal(err)
	}
	if !resp.Granted || resp.Term != 7 {
		t.Fatalf("wrong response %+v", resp)
	}
}
