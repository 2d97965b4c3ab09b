package nomad_test

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/client/testclient"
	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/nomad/nomadtest"
	"github.com/drover-sched/drover/structs"
)

// Alloc-change notices (server heap per node, issue 16): a real client
// learns of an alloc placed on its node from a notice the server pushes,
// with no blocking query held on the server; against a server without
// Node.WatchAllocs it falls back to the blocking query.

func TestClientLearnsOfItsAllocsFromANoticeWithNoBlockingQuery(t *testing.T) {
	t.Parallel()
	s, c := startServerAndClient(t)
	wait.For(t, 60*time.Second, func() (bool, string) {
		return s.AllocNoticeRegistered(c.NodeID()), "the client did not register for alloc notices"
	})
	if n := s.BlockingQueries(); n != 0 {
		t.Fatalf("%d blocking queries wait on the server: the client should hold none", n)
	}
	before := s.AllocNoticesPushed()

	var resp structs.JobRegisterResponse
	if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: rawExecJob("svc", structs.JobTypeService, "exec sleep 300")}, &resp); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 60*time.Second, func() (bool, string) {
		if n := s.BlockingQueries(); n != 0 {
			t.Fatalf("%d blocking queries wait on the server while the alloc starts", n)
		}
		a := onlyAlloc(t, s, "svc")
		if a == nil {
			return false, "no alloc"
		}
		return a.ClientStatus == structs.AllocClientStatusRunning && a.NodeID == c.NodeID(), "alloc " + a.ClientStatus
	})
	if s.AllocNoticesPushed() == before {
		t.Fatal("the alloc reached the client without a notice")
	}
	// After fetching, the client registered again for the next change.
	wait.For(t, 60*time.Second, func() (bool, string) {
		return s.AllocNoticeRegistered(c.NodeID()), "the client did not register again after the notice"
	})

	// Stopping the job reaches it the same way.
	var dresp structs.JobDeregisterResponse
	if err := s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: "svc"}, &dresp); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 60*time.Second, func() (bool, string) {
		a := onlyAlloc(t, s, "svc")
		return a.ClientTerminalStatus(), "alloc " + a.ClientStatus
	})
	if n := s.BlockingQueries(); n != 0 {
		t.Fatalf("%d blocking queries wait on the server", n)
	}
}

// olderServer serves a real server's Node and Alloc endpoints the client
// uses, except Node.WatchAllocs, as a server of an earlier release would:
// a call to it fails with "can't find method".
type olderServer struct {
	s *nomad.Server
}

type olderNode struct{ o *olderServer }
type olderAlloc struct{ o *olderServer }

func (n *olderNode) Register(args *structs.NodeRegisterRequest, reply *structs.NodeUpdateResponse) error {
	return n.o.s.RPCContext(args.CallContext(), "Node.Register", args, reply)
}

func (n *olderNode) UpdateStatus(args *structs.NodeUpdateStatusRequest, reply *structs.NodeUpdateResponse) error {
	return n.o.s.RPCContext(args.CallContext(), "Node.UpdateStatus", args, reply)
}

func (n *olderNode) GetClientAllocs(args *structs.NodeSpecificRequest, reply *structs.NodeClientAllocsResponse) error {
	return n.o.s.RPCContext(args.CallContext(), "Node.GetClientAllocs", args, reply)
}

func (n *olderNode) UpdateAlloc(args *structs.AllocUpdateRequest, reply *structs.GenericResponse) error {
	return n.o.s.RPCContext(args.CallContext(), "Node.UpdateAlloc", args, reply)
}

func (a *olderAlloc) GetAllocs(args *structs.AllocsGetRequest, reply *structs.AllocsGetResponse) error {
	return a.o.s.RPCContext(args.CallContext(), "Alloc.GetAllocs", args, reply)
}

func startOlderServer(t *testing.T, s *nomad.Server) string {
	t.Helper()
	o := &olderServer{s: s}
	srv := rpcx.NewServer(nil)
	if err := srv.Register("Node", &olderNode{o}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Register("Alloc", &olderAlloc{o}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), ln) }()
	t.Cleanup(func() {
		srv.Shutdown()
		if err := <-done; err != nil && !errors.Is(err, rpcx.ErrShutdown) {
			t.Errorf("older server: %v", err)
		}
	})
	return ln.Addr().String()
}

func TestClientFallsBackToTheBlockingQueryAgainstAnOlderServer(t *testing.T) {
	t.Parallel()
	s := nomadtest.Server(t, func(c *nomad.Config) { c.NumSchedulers = 2 })
	nomadtest.WaitForLeader(t, 5*time.Second, s)
	addr := startOlderServer(t, s)
	c := testclient.New(t, func(cfg *config.Config) { cfg.Servers = []string{addr} })
	wait.For(t, 60*time.Second, func() (bool, string) {
		n, _ := s.State().NodeByID(nil, c.NodeID())
		return n != nil && n.Status == structs.NodeStatusReady, "client not registered and ready"
	})
	// The client holds the blocking query instead.
	wait.For(t, 60*time.Second, func() (bool, string) {
		return s.BlockingQueries() == 1, "no blocking query from the client"
	})

	runSvcOn(t, s, c.NodeID())
	if s.AllocNoticeRegistered(c.NodeID()) || s.AllocNoticesPushed() != 0 {
		t.Fatal("a notice registration reached the server through a server without Node.WatchAllocs")
	}
}

// cutProxy relays TCP connections to a server and can cut them all, as a
// network fault or a server closing the client's session would.
type cutProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	// gen counts the cuts.
	gen int
}

func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			gen := p.gen
			p.mu.Unlock()
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			if p.gen != gen {
				// Accepted before a cut that could not see it yet: it
				// is cut too, or a session on it would survive.
				p.mu.Unlock()
				in.Close()
				out.Close()
				continue
			}
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); io.Copy(out, in); out.Close() }()
			go func() { defer wg.Done(); io.Copy(in, out); in.Close() }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.cut()
		wg.Wait()
	})
	return p
}

// cut closes every relayed connection.
func (p *cutProxy) cut() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.gen++
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// A client whose session closes registers again over a new one: a notice
// for the old registration has nowhere to go, and without registering
// again the client would learn of its allocs only when its lease ran out
// (five minutes).
func TestClientRegistersForNoticesAgainWhenItsSessionCloses(t *testing.T) {
	t.Parallel()
	s := nomadtest.Server(t, func(c *nomad.Config) { c.NumSchedulers = 2 })
	nomadtest.WaitForLeader(t, 5*time.Second, s)
	proxy := startCutProxy(t, s.RPCAddr())
	c := testclient.New(t, func(cfg *config.Config) { cfg.Servers = []string{proxy.ln.Addr().String()} })
	wait.For(t, 60*time.Second, func() (bool, string) {
		return s.AllocNoticeRegistered(c.NodeID()), "the client did not register for alloc notices"
	})
	// The client may come back through the proxy or, told the server's
	// own address by a heartbeat and having had a call fail in the cut,
	// straight to it: what matters is that it registers again.
	before := s.AllocNoticeRegistrations()
	proxy.cut()
	wait.For(t, 60*time.Second, func() (bool, string) {
		return s.AllocNoticeRegistrations() > before, "the client did not register again after its session closed"
	})

	runSvcOn(t, s, c.NodeID())
	if n := s.BlockingQueries(); n != 0 {
		t.Fatalf("%d blocking queries wait on the server", n)
	}
}

// runSvcOn registers the service job "svc" and waits until its one alloc
// runs on nodeID: the client learned of it, fetched it and reported it.
func runSvcOn(t *testing.T, s *nomad.Server, nodeID string) {
	t.Helper()
	var resp structs.JobRegisterResponse
	if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: rawExecJob("svc", structs.JobTypeService, "exec sleep 300")}, &resp); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 60*time.Second, func() (bool, string) {
		a := onlyAlloc(t, s, "svc")
		if a == nil {
			return false, "no alloc"
		}
		return a.ClientStatus == structs.AllocClientStatusRunning && a.NodeID == nodeID, "alloc " + a.ClientStatus
	})
}
