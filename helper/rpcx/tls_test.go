package rpcx

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/rpc"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/helper/tlsutil"
	"github.com/drover-sched/drover/helper/tlsutil/tlstest"
)

// serversOnlyForRaft is the authorizer a Drover server installs.
func serversOnlyForRaft(t ConnType, p Peer) error {
	if t == RPCRaft && !tlsutil.IsServer(p.TLS, "global") {
		return errors.New("raft needs a server certificate")
	}
	return nil
}

func startTLSServer(t *testing.T, ca *tlstest.CA, opts ...ServerOption) (*testServer, *ctxService, *tlsutil.Manager) {
	t.Helper()
	m := ca.Manager(t, tlstest.Server, "global", nil)
	ts, svc := startCtxServer(t, append([]ServerOption{WithTLS(m.IncomingRPC())}, opts...)...)
	return ts, svc, m
}

func TestTLSRoundTripCarriesTheVerifiedPeer(t *testing.T) {
	ca := tlstest.NewCA(t)
	ts, svc, _ := startTLSServer(t, ca)
	client := ca.Manager(t, tlstest.Client, "global", nil)
	p := newTestPool(t, PoolConfig{TLS: client.OutgoingRPC()})

	var reply EchoReply
	if err := p.RPC(testCtx(t), ts.addr, "Test.Echo", &EchoArgs{Msg: "over tls"}, &reply); err != nil || reply.Msg != "over tls" {
		t.Fatalf("Echo over TLS: %v %+v", err, reply)
	}
	go p.RPC(testCtx(t), ts.addr, "Ctx.Wait", &CtxArgs{}, &EchoReply{})
	peer := <-svc.started
	if peer.TLS == nil || !tlsutil.IsClient(peer.TLS, "global") || tlsutil.IsServer(peer.TLS, "global") {
		t.Fatalf("the call's peer should be a verified client certificate, got %+v", peer.TLS)
	}

	// A plain net/rpc connection inside TLS works too.
	conn, err := DialTLS(ts.addr, RPCStandard, client.OutgoingRPC())
	if err != nil {
		t.Fatal(err)
	}
	c := rpc.NewClientWithCodec(NewClientCodec(conn, 0))
	defer c.Close()
	if err := c.Call("Test.Echo", &EchoArgs{Msg: "standard"}, &reply); err != nil || reply.Msg != "standard" {
		t.Fatalf("standard over TLS: %v %+v", err, reply)
	}
}

func TestPlaintextIsRefusedWhenTLSIsRequired(t *testing.T) {
	ca := tlstest.NewCA(t)
	ts, _, _ := startTLSServer(t, ca, WithRaftLayer(NewRaftLayer(&net.TCPAddr{}, nil)))
	for _, typ := range []ConnType{RPCStandard, RPCMultiplex, RPCRaft} {
		conn, err := Dial(ts.addr, typ)
		if err != nil {
			t.Fatal(err)
		}
		// A request that would be served if anything read it.
		conn.Write([]byte{0x82, 0xa1, 'x', 0x01})
		waitClosed(t, conn)
		conn.Close()
	}
	p := newTestPool(t, PoolConfig{})
	err := p.RPC(testCtx(t), ts.addr, "Test.Echo", &EchoArgs{}, &EchoReply{})
	if err == nil {
		t.Fatal("a plaintext pool must not get an answer from a TLS server")
	}
	if !strings.Contains(err.Error(), "if it requires TLS (tls.rpc)") {
		t.Errorf("the plaintext caller's error should say TLS may be required: %v", err)
	}
	waitFor(t, "the refusal in the log", func() bool {
		return strings.Contains(ts.logs.String(), "refusing plaintext connection: this server requires TLS (tls.rpc)")
	})
	// Four refusals from one IP, one log line: knocking cannot flood the log.
	if n := strings.Count(ts.logs.String(), "refusing plaintext connection"); n != 1 {
		t.Fatalf("want the refusal logged once per minute per IP, logged %d times", n)
	}
}

func TestTLSToAServerWithoutTLSIsRefused(t *testing.T) {
	ts := startServer(t, "")
	client := tlstest.NewCA(t).Manager(t, tlstest.Client, "global", nil)
	if _, err := DialTLS(ts.addr, RPCStandard, client.OutgoingRPC()); err == nil {
		t.Fatal("want the handshake to fail against a plaintext server")
	}
	mustEcho(t, ts)
}

func TestClientCertificateOfAnotherCAIsRefused(t *testing.T) {
	ca := tlstest.NewCA(t)
	ts, svc, _ := startTLSServer(t, ca)
	// The stranger trusts our CA (so its own checks pass) but holds a
	// certificate of its own CA.
	stranger := tlstest.NewCA(t)
	cert, key := stranger.RoleCert(t, tlstest.Client, "global")
	m, err := tlsutil.New(tlsutil.Config{EnableRPC: true, CAFile: stranger.CAFile, CertFile: cert, KeyFile: key}, "global", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := m.OutgoingRPC()
	cfg.VerifyConnection = nil // trust anything, to reach the server's check
	p := newTestPool(t, PoolConfig{TLS: cfg})
	err = p.RPC(testCtx(t), ts.addr, "Ctx.Wait", &CtxArgs{}, &EchoReply{})
	if err == nil {
		t.Fatal("a certificate of another CA must be refused")
	}
	// The refusal arrives as the server's alert or, when it comes after
	// the client's handshake is done, as a closed session.
	if !strings.Contains(err.Error(), "unknown certificate authority") && !strings.Contains(err.Error(), "refused this agent's certificate") {
		t.Errorf("the caller's error should say its certificate was refused: %v", err)
	}
	select {
	case peer := <-svc.started:
		t.Fatalf("a call ran for a refused peer: %+v", peer)
	default:
	}
	waitFor(t, "the handshake failure in the log", func() bool {
		return strings.Contains(ts.logs.String(), "TLS handshake failed")
	})
}

func TestTLSHandshakeTimeoutBoundsASilentPeer(t *testing.T) {
	ca := tlstest.NewCA(t)
	ts, _, _ := startTLSServer(t, ca, WithHandshakeTimeout(100*time.Millisecond))

	// Announces TLS, then says nothing.
	conn, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte{byte(RPCTLS)})
	start := time.Now()
	waitClosed(t, conn)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("closed after %s, want about the handshake timeout", d)
	}

	// Completes the handshake, then never says which protocol follows.
	client := ca.Manager(t, tlstest.Client, "global", nil)
	raw, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.Write([]byte{byte(RPCTLS)})
	tc := tls.Client(raw, client.OutgoingRPC())
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	tc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := tc.Read(make([]byte, 1)); err == nil {
		t.Fatal("want the server to close a TLS peer that never sends its type")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the server kept a TLS peer that never sent its type")
	}
}

// raftNode is one end of a raft transport over a TLS RPC port.
func raftNode(t *testing.T, ca *tlstest.CA, role tlstest.Role) (*raft.NetworkTransport, *testServer) {
	t.Helper()
	m := ca.Manager(t, role, "global", nil)
	ln := mustListen(t)
	layer := NewRaftLayer(ln.Addr(), m.OutgoingRPC())
	t.Cleanup(func() { layer.Close() })
	ts := startServerOn(t, ln, WithRaftLayer(layer), WithTLS(m.IncomingRPC()), WithConnAuthorizer(serversOnlyForRaft))
	trans := raft.NewNetworkTransport(layer, 2, 5*time.Second, io.Discard)
	t.Cleanup(func() { trans.Close() })
	return trans, ts
}

func TestRaftOverTLSTakesOnlyServerCertificates(t *testing.T) {
	ca := tlstest.NewCA(t)
	target, ts := raftNode(t, ca, tlstest.Server)
	var mu sync.Mutex
	var votes []uint64
	go func() {
		for rpc := range target.Consumer() {
			req := rpc.Command.(*raft.RequestVoteRequest)
			mu.Lock()
			votes = append(votes, req.Term)
			mu.Unlock()
			rpc.Respond(&raft.RequestVoteResponse{Term: req.Term, Granted: true}, nil)
		}
	}()

	server, _ := raftNode(t, ca, tlstest.Server)
	var resp raft.RequestVoteResponse
	req := raft.RequestVoteRequest{RPCHeader: raft.RPCHeader{Addr: []byte(server.LocalAddr())}, Term: 7}
	if err := server.RequestVote("2", target.LocalAddr(), &req, &resp); err != nil || !resp.Granted {
		t.Fatalf("a server certificate must reach raft: %v %+v", err, resp)
	}

	client, _ := raftNode(t, ca, tlstest.Client)
	req.Term = 8
	if err := client.RequestVote("2", target.LocalAddr(), &req, &resp); err == nil {
		t.Fatal("a client certificate must not reach raft")
	}
	waitFor(t, "the refusal in the log", func() bool {
		return strings.Contains(ts.logs.String(), "raft needs a server certificate")
	})
	mu.Lock()
	defer mu.Unlock()
	if len(votes) != 1 || votes[0] != 7 {
		t.Fatalf("raft saw terms %v, want only the server's 7", votes)
	}
}

func TestReloadedCertificatesReachNewConnectionsAndOldOnesKeepWorking(t *testing.T) {
	ca := tlstest.NewCA(t)
	serverCfg := ca.Config(t, tlstest.Server, "global")
	m, err := tlsutil.New(serverCfg, "global", nil)
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := startCtxServer(t, WithTLS(m.IncomingRPC()))
	client := ca.Manager(t, tlstest.Client, "global", nil)

	// seenBy returns a pool whose handshakes record the server's
	// certificate.
	seenBy := func() (*ConnPool, func() *x509.Certificate) {
		var mu sync.Mutex
		var seen *x509.Certificate
		cfg := client.OutgoingRPC()
		verify := cfg.VerifyConnection
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			mu.Lock()
			seen = cs.PeerCertificates[0]
			mu.Unlock()
			return verify(cs)
		}
		return newTestPool(t, PoolConfig{TLS: cfg}), func() *x509.Certificate {
			mu.Lock()
			defer mu.Unlock()
			return seen
		}
	}
	echo := func(p *ConnPool) {
		t.Helper()
		if err := p.RPC(testCtx(t), ts.addr, "Test.Echo", &EchoArgs{Msg: "x"}, &EchoReply{}); err != nil {
			t.Fatal(err)
		}
	}
	oldPool, oldSeen := seenBy()
	echo(oldPool)
	before := oldSeen()

	next := serverCfg
	next.CertFile, next.KeyFile = ca.RoleCert(t, tlstest.Server, "global")
	if err := m.Reload(next); err != nil {
		t.Fatal(err)
	}
	newPool, newSeen := seenBy()
	echo(newPool)
	if newSeen().SerialNumber.Cmp(before.SerialNumber) == 0 {
		t.Fatal("a new connection must see the reloaded certificate")
	}
	// The old session is still open and still answers.
	echo(oldPool)
	if oldSeen() != before {
		t.Fatal("the old pool should not have needed a new handshake")
	}
}
