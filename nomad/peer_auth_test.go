package nomad

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/helper/tlsutil"
	"github.com/drover-sched/drover/helper/tlsutil/tlstest"
	"github.com/drover-sched/drover/structs"
)

// startTLSCluster starts n servers with mutual TLS and
// verify_server_hostname, each with its own server certificate of ca.
func startTLSCluster(t *testing.T, ca *tlstest.CA, n int, edit func(*Config)) []*Server {
	t.Helper()
	var servers []*Server
	for i := range n {
		servers = append(servers, testServer(t, func(c *Config) {
			c.BootstrapExpect = n
			c.NodeName = fmt.Sprintf("%s-s%d", t.Name(), i)
			c.TLS = ca.Manager(t, tlstest.Server, c.Region, nil)
			if edit != nil {
				edit(c)
			}
		}))
	}
	for _, s := range servers {
		for _, o := range servers {
			if o != s {
				s.Join(o.RPCAddr())
			}
		}
	}
	return servers
}

// peerPool is a pool that dials like a peer holding role's certificate of
// ca; a zero role dials plaintext.
func peerPool(t *testing.T, ca *tlstest.CA, role tlstest.Role) *rpcx.ConnPool {
	t.Helper()
	cfg := rpcx.PoolConfig{}
	if role != "" {
		cfg.TLS = ca.Manager(t, role, "global", nil).OutgoingRPC()
	}
	p := rpcx.NewConnPool(cfg)
	t.Cleanup(p.Shutdown)
	return p
}

func peerRPC(t *testing.T, p *rpcx.ConnPool, addr, method string, args, reply any) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return p.RPC(ctx, addr, method, args, reply)
}

func wantDenied(t *testing.T, err error, role string) {
	t.Helper()
	if err == nil {
		t.Fatal("want the call refused, it succeeded")
	}
	if !errors.Is(err, structs.ErrPermissionDenied) || !strings.Contains(err.Error(), role) {
		t.Fatalf("want a permission error naming %q, got %v", role, err)
	}
}

func TestTLSClusterFormsElectsForwardsAndReplicates(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t)
	servers := startTLSCluster(t, ca, 3, nil)
	leader := WaitForLeader(t, 20*time.Second, servers...)
	var follower *Server
	for _, s := range servers {
		if s != leader {
			follower = s
		}
	}
	// Written on a follower: forwarded to the leader over TLS, replicated
	// to every server over raft on TLS.
	for i := range 5 {
		kvWrite(t, follower, fmt.Sprintf("k%d", i), "v")
	}
	for _, s := range servers {
		WaitFor(t, 10*time.Second, func() (bool, string) {
			for i := range 5 {
				if _, ok := kvStale(s, fmt.Sprintf("k%d", i)); !ok {
					return false, s.config.NodeName + " has not got k" + fmt.Sprint(i)
				}
			}
			return true, ""
		})
	}
	// A client agent's node registers through a follower, which forwards
	// it to the leader with its server certificate. Like a client, the
	// test registers again when an election loses the answer (see
	// election_helpers_test.go); registering is idempotent.
	client := peerPool(t, ca, tlstest.Client)
	node := itNode("tls-node")
	deadline := time.Now().Add(10 * time.Second)
	for {
		var resp structs.NodeUpdateResponse
		err := peerRPC(t, client, follower.RPCAddr(), "Node.Register", &structs.NodeRegisterRequest{Node: node}, &resp)
		if err == nil {
			break
		}
		if !errors.Is(err, structs.ErrNoLeader) || time.Now().After(deadline) {
			t.Fatalf("a client certificate registering through a follower: %v", err)
		}
		WaitForLeader(t, 10*time.Second, servers...)
	}
	for _, s := range servers {
		WaitFor(t, 10*time.Second, func() (bool, string) {
			n, _ := s.State().NodeByID(nil, "tls-node")
			return n != nil, "the node is not registered on " + s.config.NodeName
		})
	}
}

func TestClientCertificatesCannotCallServerEndpoints(t *testing.T) {
	ca := tlstest.NewCA(t)
	s := testServer(t, func(c *Config) {
		c.TLS = ca.Manager(t, tlstest.Server, c.Region, nil)
		c.NumSchedulers = 0 // the eval stays in the broker for the attacker
	})
	WaitForLeader(t, 10*time.Second, s)
	registerNode(t, s, itNode("n1"))
	job := registerJob(t, s, itJob("web", 1))
	WaitFor(t, 5*time.Second, func() (bool, string) {
		st := s.evalBroker.Stats()
		return st.TotalReady == 1, fmt.Sprintf("broker: %+v", st)
	})

	attacker := peerPool(t, ca, tlstest.Client)
	var deq structs.EvalDequeueResponse
	err := peerRPC(t, attacker, s.RPCAddr(), "Eval.Dequeue", &structs.EvalDequeueRequest{Schedulers: []string{"service"}, Timeout: time.Second}, &deq)
	wantDenied(t, err, "Eval.Dequeue may be called only by a server")
	if deq.Eval != nil || s.evalBroker.Stats().TotalUnacked != 0 {
		t.Fatal("a refused dequeue must not take the eval")
	}

	plan := &structs.Plan{EvalID: job.EvalID, Job: itJob("web", 1), NodeAllocation: map[string][]*structs.Allocation{
		"n1": {{ID: structs.GenerateUUID(), NodeID: "n1", JobID: "web", TaskGroup: "web", DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending}},
	}}
	var pr structs.PlanResponse
	wantDenied(t, peerRPC(t, attacker, s.RPCAddr(), "Plan.Submit", &structs.PlanRequest{Plan: plan}, &pr), "Plan.Submit may be called only by a server")
	var gr structs.GenericResponse
	wantDenied(t, peerRPC(t, attacker, s.RPCAddr(), "Eval.Update", &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{{ID: job.EvalID}}}, &gr), "Eval.Update")
	wantDenied(t, peerRPC(t, attacker, s.RPCAddr(), "Operator.RaftAddPeer", &structs.RaftPeerAddRequest{ID: "evil", Address: "127.0.0.1:1"}, &gr), "Operator.RaftAddPeer")

	// A request claiming a server already forwarded it.
	var jobs structs.JobListResponse
	list := &structs.JobListRequest{QueryOptions: structs.QueryOptions{Forwarded: true}}
	wantDenied(t, peerRPC(t, attacker, s.RPCAddr(), "Job.List", list, &jobs), "marked as forwarded may come only from a server")
	kv := &structs.GenericWriteRequest{Key: "forged", Value: "x", WriteRequest: structs.WriteRequest{Forwarded: true}}
	wantDenied(t, peerRPC(t, attacker, s.RPCAddr(), "KV.Write", kv, &gr), "marked as forwarded")

	if allocs := jobAllocs(t, s, "web"); len(allocs) != 0 {
		t.Fatalf("forged calls placed %d allocs", len(allocs))
	}
	if cfg, _, _ := s.raftConfiguration(); len(cfg.Servers) != 1 {
		t.Fatalf("a forged RaftAddPeer changed the raft configuration: %+v", cfg.Servers)
	}
	if _, ok := kvStale(s, "forged"); ok {
		t.Fatal("a forged forwarded write was applied")
	}

	// The same calls from a server certificate are served.
	server := peerPool(t, ca, tlstest.Server)
	if err := peerRPC(t, server, s.RPCAddr(), "Job.List", list, &jobs); err != nil || len(jobs.Jobs) != 1 {
		t.Fatalf("a forwarded read from a server: %v, %d jobs", err, len(jobs.Jobs))
	}
	if err := peerRPC(t, server, s.RPCAddr(), "Eval.Dequeue", &structs.EvalDequeueRequest{Schedulers: []string{"service"}, Timeout: time.Second}, &deq); err != nil || deq.Eval == nil {
		t.Fatalf("a server dequeues: %v %+v", err, deq)
	}
}

func TestNodeEndpointsNeedAnAgentCertificate(t *testing.T) {
	ca := tlstest.NewCA(t)
	s := testServer(t, func(c *Config) { c.TLS = ca.Manager(t, tlstest.Server, c.Region, nil) })
	WaitForLeader(t, 10*time.Second, s)

	var resp structs.NodeUpdateResponse
	client := peerPool(t, ca, tlstest.Client)
	if err := peerRPC(t, client, s.RPCAddr(), "Node.Register", &structs.NodeRegisterRequest{Node: itNode("good")}, &resp); err != nil {
		t.Fatalf("a client certificate registers a node: %v", err)
	}
	cli := peerPool(t, ca, tlstest.CLI)
	wantDenied(t, peerRPC(t, cli, s.RPCAddr(), "Node.Register", &structs.NodeRegisterRequest{Node: itNode("by-cli")}, &resp),
		"Node.Register may be called only by a client agent or a server")
	var allocs structs.AllocsGetResponse
	wantDenied(t, peerRPC(t, cli, s.RPCAddr(), "Alloc.GetAllocs", &structs.AllocsGetRequest{}, &allocs), "Alloc.GetAllocs")

	plaintext := peerPool(t, nil, "")
	err := peerRPC(t, plaintext, s.RPCAddr(), "Node.Register", &structs.NodeRegisterRequest{Node: itNode("no-cert")}, &resp)
	if err == nil {
		t.Fatal("a plaintext peer must not register a node")
	}
	for _, id := range []string{"by-cli", "no-cert"} {
		if n, _ := s.State().NodeByID(nil, id); n != nil {
			t.Fatalf("node %s was registered by a refused peer", id)
		}
	}
	if n, _ := s.State().NodeByID(nil, "good"); n == nil {
		t.Fatal("the client's node is missing")
	}
}

func TestRaftConnectionWithAClientCertificateIsClosed(t *testing.T) {
	ca := tlstest.NewCA(t)
	s := testServer(t, func(c *Config) { c.TLS = ca.Manager(t, tlstest.Server, c.Region, nil) })
	WaitForLeader(t, 10*time.Second, s)
	for _, role := range []tlstest.Role{tlstest.Client, tlstest.CLI} {
		conn, err := rpcx.DialTLS(s.RPCAddr(), rpcx.RPCRaft, ca.Manager(t, role, "global", nil).OutgoingRPC())
		if err != nil {
			t.Fatal(err)
		}
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("%s: want the raft connection closed at once, got %v", role, err)
		}
		conn.Close()
	}
	// A plaintext raft connection: closed without a byte read.
	conn, err := rpcx.Dial(s.RPCAddr(), rpcx.RPCRaft)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("plaintext raft: want closed, got %v", err)
	}
}

func TestWithoutVerifyServerHostnameRolesAreNotChecked(t *testing.T) {
	ca := tlstest.NewCA(t)
	s := testServer(t, func(c *Config) {
		c.TLS = ca.Manager(t, tlstest.Server, c.Region, func(tc *tlsutil.Config) { tc.VerifyServerHostname = false })
	})
	WaitForLeader(t, 10*time.Second, s)
	cli := peerPool(t, ca, tlstest.CLI)
	var resp structs.NodeUpdateResponse
	if err := peerRPC(t, cli, s.RPCAddr(), "Node.Register", &structs.NodeRegisterRequest{Node: itNode("n")}, &resp); err != nil {
		t.Fatalf("any certificate of the CA may call node endpoints without verify_server_hostname: %v", err)
	}
}
