package nomad

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/helper/tlsutil/tlstest"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// userRPC calls method on s the way the HTTP API does for a user: in
// process, naming a remote caller, so the call is nobody's own work and
// acts with its token alone.
func userRPC(s *Server, method string, args, reply any) error {
	ctx := rpcx.WithPeer(context.Background(), rpcx.Peer{Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 40000}})
	return s.RPCContext(ctx, method, args, reply)
}

// remoteRPC calls method on s over the network from a connection of the
// caller's own, as any process that reaches the RPC port can.
func remoteRPC(t *testing.T, s *Server, method string, args, reply any) error {
	t.Helper()
	pool := rpcx.NewConnPool(rpcx.PoolConfig{})
	defer pool.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return pool.RPC(ctx, s.RPCAddr(), method, args, reply)
}

func requireDenied(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil || !errors.Is(err, structs.ErrPermissionDenied) {
		t.Fatalf("%s: got %v, want %q", what, err, structs.ErrPermissionDenied)
	}
}

// latestIndex is the state's newest raft index: a refused write must
// leave it where it was.
func latestIndex(t *testing.T, s *Server) uint64 {
	t.Helper()
	idx, err := s.State().LatestIndex()
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// rpcNotChecked lists the endpoints a caller without a token may reach,
// and why. Every other registered endpoint must refuse such a caller:
// TestEveryRPCEndpointRefusesACallerWithoutAToken fails for a new
// endpoint until it checks, or is listed here with its reason.
var rpcNotChecked = map[string]struct {
	why string
	// ok checks the answer a caller without a token gets.
	ok func(err error) bool
}{
	"Status.Ping":   {"liveness, as Nomad's /v1/status endpoints need no token", isNil},
	"Status.Leader": {"the leader's address, as Nomad's /v1/status/leader", isNil},
	"Status.Peers":  {"the peers' addresses, as Nomad's /v1/status/peers", isNil},
	"Status.Member": {"joining servers ask it before they hold any secret", isNil},
	"ACL.Bootstrap": {"bootstrapping is how the first token is made; once done it refuses",
		func(err error) bool { return errors.Is(err, structs.ErrACLBootstrapDone) }},
	"ACL.GetTokenSelf": {"no token reads the anonymous token, as in Nomad", isNil},
	"ACL.ResolveToken": {"the secret asked about is the credential", isNil},
	"ACL.ListPolicies": {"answers only the caller's own policies (the anonymous one)", isNil},
	"Node.Register": {"a client's own call: its node secret is checked (node_identity.go)",
		func(err error) bool { return errors.Is(err, ErrBadRequest) }},
	"Node.UpdateStatus": {"a client's own call: its node secret is checked",
		func(err error) bool { return errors.Is(err, ErrBadRequest) }},
	"Node.GetClientAllocs": {"a client's own call: its node secret is checked", isNodeRefusal},
	"Node.UpdateAlloc":     {"a client's own call: its node secret is checked", isNodeRefusal},
	// Native service registrations (issue 13, services).
	"ServiceRegistration.Upsert":     {"a client's own call: its node secret is checked", isNodeRefusal},
	"ServiceRegistration.Deregister": {"a client's own call: its node secret is checked", isNodeRefusal},
	"ServiceRegistration.ForAlloc":   {"a client's own call: its node secret is checked", isNodeRefusal},
	// Server-pushed alloc notices (issue 16, allocpush).
	"Node.WatchAllocs": {"a client's own call: its node secret is checked", isNodeRefusal},
}

func isNil(err error) bool { return err == nil }

func isNodeRefusal(err error) bool {
	return errors.Is(err, structs.ErrNodeSecretMissing) || errors.Is(err, structs.ErrNodeSecretDenied) ||
		errors.Is(err, ErrBadRequest)
}

// Every RPC endpoint a user can reach checks the caller: with ACLs on and
// an anonymous policy that grants nothing, a call without a token from
// another process is refused by every registered endpoint but the few
// listed in rpcNotChecked, and each of those answers as its reason says.
// The list of endpoints is the server's own registry, so an endpoint
// added without a check fails this test.
func TestEveryRPCEndpointRefusesACallerWithoutAToken(t *testing.T) {
	t.Parallel()
	s := aclServer(t, nil)
	boot := bootstrapACL(t, s)
	upsertPolicy(t, s, boot.SecretID, structs.AnonymousACLPolicy, `node { policy = "deny" }`)

	methods := s.rpcServer.Methods()
	registered := map[string]bool{}
	for _, m := range methods {
		registered[m] = true
		args, reply, err := s.rpcServer.NewCallValues(m)
		if err != nil {
			t.Fatal(err)
		}
		before := latestIndex(t, s)
		err = remoteRPC(t, s, m, args, reply)
		if exempt, ok := rpcNotChecked[m]; ok {
			if !exempt.ok(err) {
				t.Errorf("%s (%s): unexpected answer %v", m, exempt.why, err)
			}
			continue
		}
		if !errors.Is(err, structs.ErrPermissionDenied) {
			t.Errorf("%s answered a caller without a token with %v; it must check the token (nomad/acl_check.go) "+
				"or be listed in rpcNotChecked with the reason it need not", m, err)
		}
		if after := latestIndex(t, s); after != before {
			t.Errorf("%s: a refused call moved the state from index %d to %d", m, before, after)
		}
	}
	for m := range rpcNotChecked {
		if !registered[m] {
			t.Errorf("rpcNotChecked lists %s, which is not registered", m)
		}
	}
	if len(methods) < 50 {
		t.Fatalf("only %d methods registered; the registry walk is broken", len(methods))
	}
}

// A request marked Forwarded claims a server sent it: with ACLs on only a
// server may (its proof is the server secret, which forward attaches).
func TestAForwardedRequestMustComeFromAServer(t *testing.T) {
	s := aclServer(t, nil)
	boot := bootstrapACL(t, s)
	list := func(serverToken string) error {
		args := &structs.JobListRequest{QueryOptions: query(boot.SecretID)}
		args.Forwarded, args.ServerToken = true, serverToken
		return remoteRPC(t, s, "Job.List", args, &structs.JobListResponse{})
	}
	requireDenied(t, "forwarded without proof", list(""))
	requireDenied(t, "forwarded with a made-up proof", list(structs.GenerateUUID()))
	requireDenied(t, "forwarded with a user's token as proof", list(boot.SecretID))
	if err := list(s.serverSecret()); err != nil {
		t.Fatalf("forwarded by a server: %v", err)
	}
	// Not forwarded, the same call is an ordinary user's.
	if err := remoteRPC(t, s, "Job.List", &structs.JobListRequest{QueryOptions: query(boot.SecretID)}, &structs.JobListResponse{}); err != nil {
		t.Fatal(err)
	}
}

// The workers' endpoints are for servers only: no token opens them, not
// even a management token; the server secret does, and so does the
// server's own in-process call.
func TestServerOnlyEndpointsRefuseEveryToken(t *testing.T) {
	s := aclServer(t, nil)
	boot := bootstrapACL(t, s)
	dequeue := func(token string) error {
		args := &structs.EvalDequeueRequest{Schedulers: []string{structs.JobTypeService}, Timeout: 10 * time.Millisecond,
			WriteRequest: write(token)}
		return remoteRPC(t, s, "Eval.Dequeue", args, &structs.EvalDequeueResponse{})
	}
	requireDenied(t, "a management token", dequeue(boot.SecretID))
	requireDenied(t, "no token", dequeue(""))
	if err := dequeue(s.serverSecret()); err != nil {
		t.Fatalf("the server secret: %v", err)
	}
	add := &structs.RaftPeerAddRequest{ID: "x", Address: "127.0.0.1:1", WriteRequest: write(boot.SecretID)}
	before := latestIndex(t, s)
	requireDenied(t, "RaftAddPeer with a management token", remoteRPC(t, s, "Operator.RaftAddPeer", add, &structs.GenericResponse{}))
	if cfg, _, _ := s.raftConfiguration(); len(cfg.Servers) != 1 || latestIndex(t, s) != before {
		t.Fatalf("a refused RaftAddPeer changed the configuration: %+v", cfg.Servers)
	}
	var out structs.EvalDequeueResponse
	if err := s.RPC("Eval.Dequeue", &structs.EvalDequeueRequest{Schedulers: []string{structs.JobTypeService}, Timeout: 10 * time.Millisecond}, &out); err != nil {
		t.Fatalf("the server's own call: %v", err)
	}
}

// The leader makes the server secret once, when ACLs are on, and it
// survives leadership changes: a restarted leader keeps the secret the
// other servers already use. Without ACLs there is none.
func TestTheServerSecretIsMadeOnceWithACLs(t *testing.T) {
	t.Parallel()
	plain := testServer(t, nil)
	WaitForLeader(t, 10*time.Second, plain)
	if sec := plain.serverSecret(); sec != "" {
		t.Fatalf("a server without ACLs made a secret %q", sec)
	}

	dir := t.TempDir()
	s := aclServer(t, func(c *Config) { c.DataDir = dir })
	WaitFor(t, 5*time.Second, func() (bool, string) { return s.serverSecret() != "", "no server secret yet" })
	first := s.serverSecret()
	if len(first) != 36 {
		t.Fatalf("secret %q is not a UUID", first)
	}
	s.Shutdown()
	again := aclServer(t, func(c *Config) { c.DataDir = dir })
	WaitFor(t, 5*time.Second, func() (bool, string) { return again.serverSecret() != "", "no server secret after restart" })
	if got := again.serverSecret(); got != first {
		t.Fatalf("the restarted leader has secret %q, want the first %q", got, first)
	}
	if err := again.bootstrapServerSecret(); err != nil || again.serverSecret() != first {
		t.Fatalf("a second bootstrap replaced the secret: %v", err)
	}
}

// On a three-server cluster with ACLs on, a follower's own calls (its
// workers) reach the leader with the server secret, while a user's call
// to the same server-only endpoint through that follower is refused.
func TestFollowersProveThemselvesToTheLeader(t *testing.T) {
	t.Parallel()
	var servers []*Server
	for i := 0; i < 3; i++ {
		servers = append(servers, aclClusterServer(t, i))
	}
	for _, s := range servers {
		for _, o := range servers {
			if o != s {
				s.Join(o.RPCAddr())
			}
		}
	}
	leader := WaitForLeader(t, 10*time.Second, servers...)
	var follower *Server
	for _, s := range servers {
		if s != leader {
			follower = s
			break
		}
	}
	WaitFor(t, 5*time.Second, func() (bool, string) {
		return follower.serverSecret() != "" && follower.serverSecret() == leader.serverSecret(), "the follower has no secret yet"
	})
	args := func() *structs.EvalDequeueRequest {
		return &structs.EvalDequeueRequest{Schedulers: []string{structs.JobTypeService}, Timeout: 10 * time.Millisecond}
	}
	// Each call is retried across an election (in-process clusters on a
	// loaded machine may change leader): what is checked is the answer
	// once a leader answers.
	if err := acrossElections(t, func() error { return follower.RPC("Eval.Dequeue", args(), &structs.EvalDequeueResponse{}) }); err != nil {
		t.Fatalf("a follower's own dequeue, forwarded to the leader: %v", err)
	}
	// The bootstrap names its secret, so that one which committed before
	// its answer was lost to an election is still known.
	secret := structs.GenerateUUID()
	if err := acrossElections(t, func() error {
		return follower.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{BootstrapSecret: secret, WriteRequest: write("")},
			&structs.ACLTokenUpsertResponse{})
	}); err != nil && !errors.Is(err, structs.ErrACLBootstrapDone) {
		t.Fatalf("bootstrap: %v", err)
	}
	user := args()
	user.AuthToken = secret
	requireDenied(t, "a user's dequeue through a follower", acrossElections(t, func() error {
		return remoteRPC(t, follower, "Eval.Dequeue", user, &structs.EvalDequeueResponse{})
	}))

	// A user's ordinary write through the follower is forwarded with the
	// follower's proof and checked on the leader against the user's token.
	if err := acrossElections(t, func() error {
		reg := &structs.JobRegisterRequest{Job: itJob("fwd", 1), WriteRequest: write(secret)}
		return remoteRPC(t, follower, "Job.Register", reg, &structs.JobRegisterResponse{})
	}); err != nil {
		t.Fatalf("register through a follower: %v", err)
	}
	requireDenied(t, "an anonymous register through a follower", acrossElections(t, func() error {
		reg := &structs.JobRegisterRequest{Job: itJob("anon", 1), WriteRequest: write("")}
		return remoteRPC(t, follower, "Job.Register", reg, &structs.JobRegisterResponse{})
	}))
	for _, s := range servers {
		if j, _ := s.State().JobByID(nil, structs.DefaultNamespace, "anon"); j != nil {
			t.Fatal("the refused register stored its job")
		}
	}
}

// acrossElections runs call until it gets an answer that is not about
// leadership (an election in progress, a leader lost while committing),
// for at most 20 seconds, and returns that answer. A write that failed
// with "leadership lost" may have committed; the calls it is used for
// are the same when repeated.
func acrossElections(t *testing.T, call func() error) error {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := call()
		if err == nil || !(errors.Is(err, structs.ErrNoLeader) || strings.Contains(err.Error(), "leadership lost")) {
			return err
		}
		// The next call waits for the new leader itself (forward waits
		// out an election).
		if time.Now().After(deadline) {
			t.Fatalf("no stable leader within 20s: %v", err)
		}
	}
}

// The server secret is never answered: it is in no reply of a read a
// management token can make.
func TestTheServerSecretIsInNoAnswer(t *testing.T) {
	s := aclServer(t, nil)
	boot := bootstrapACL(t, s)
	WaitFor(t, 5*time.Second, func() (bool, string) { return s.serverSecret() != "", "no secret" })
	sec := s.serverSecret()
	for _, m := range s.rpcServer.Methods() {
		if strings.HasPrefix(m, "Eval.") || m == "Plan.Submit" || m == "Operator.RaftAddPeer" || m == "ACL.Bootstrap" {
			continue // server-only or writes
		}
		args, reply, _ := s.rpcServer.NewCallValues(m)
		if q, ok := args.(interface{ SetRequestAuthToken(string) }); ok {
			q.SetRequestAuthToken(boot.SecretID)
		}
		_ = userRPC(s, m, args, reply)
		if buf, err := rpcx.Encode(reply); err == nil && strings.Contains(string(buf), sec) {
			t.Errorf("%s answered the server secret", m)
		}
	}
}

// A server forwarding before the server secret has reached it (a cluster
// just formed) sends the request as it is, and only when the leader
// refuses it waits for the secret and sends it once more, signed; with no
// refusal it never waits.
func TestForwardingWaitsForTheSecretOnlyWhenRefused(t *testing.T) {
	s := waiting(t, "fresh", func(c *Config) { c.ACLEnabled = true })
	own := rpcx.WithPeer(context.Background(), rpcx.Peer{InProcess: true})

	var sent []string
	args := &structs.EvalDequeueRequest{}
	args.SetCallContext(own)
	err := s.forwardSigned(args, func() error {
		sent = append(sent, args.AuthToken+"/"+args.ServerToken)
		return nil
	})
	if err != nil || len(sent) != 1 || sent[0] != "/" {
		t.Fatalf("an accepted request without a secret: sent %q, %v; want once, unsigned", sent, err)
	}

	sent = nil
	args = &structs.EvalDequeueRequest{}
	args.SetCallContext(own)
	err = s.forwardSigned(args, func() error {
		sent = append(sent, args.AuthToken+"/"+args.ServerToken)
		if len(sent) == 1 {
			// The refusal arrives; then the secret replicates here.
			go func() {
				err := s.State().Write(100, func(tx *state.Txn) error {
					_, err := tx.SetServerSecretIfMissing("the-secret")
					return err
				})
				if err != nil {
					t.Error(err)
				}
			}()
			return structs.ErrPermissionDenied
		}
		return nil
	})
	if err != nil || len(sent) != 2 || sent[0] != "/" || sent[1] != "the-secret/the-secret" {
		t.Fatalf("a refused request: sent %q, %v; want it again, signed as the server's own", sent, err)
	}
}

// With certificate roles checked, a call from another process is judged
// by its certificate, with or without ACLs: a server certificate needs no
// server secret, and the secret does not make a client certificate a
// server's. Tokens still gate what users may do, and a three-server
// cluster with both forwards and checks as it does with either.
func TestWithTLSRolesAndACLsTheCertificateProvesAServer(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t)
	servers := startTLSCluster(t, ca, 3, func(c *Config) { c.ACLEnabled = true })
	leader := WaitForLeader(t, 20*time.Second, servers...)
	var follower *Server
	for _, s := range servers {
		if s != leader {
			follower = s
		}
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		return follower.serverSecret() != "" && follower.serverSecret() == leader.serverSecret(), "no secret on the follower yet"
	})
	secret := structs.GenerateUUID()
	if err := acrossElections(t, func() error {
		return follower.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{BootstrapSecret: secret, WriteRequest: write("")},
			&structs.ACLTokenUpsertResponse{})
	}); err != nil && !errors.Is(err, structs.ErrACLBootstrapDone) {
		t.Fatalf("bootstrap through a follower over TLS: %v", err)
	}

	server, client := peerPool(t, ca, tlstest.Server), peerPool(t, ca, tlstest.Client)
	dequeue := func(p *rpcx.ConnPool, token string) error {
		args := &structs.EvalDequeueRequest{Schedulers: []string{structs.JobTypeService}, Timeout: 10 * time.Millisecond, WriteRequest: write(token)}
		return acrossElections(t, func() error {
			return peerRPC(t, p, leader.RPCAddr(), "Eval.Dequeue", args, &structs.EvalDequeueResponse{})
		})
	}
	if err := dequeue(server, ""); err != nil {
		t.Fatalf("a server certificate without the secret: %v", err)
	}
	wantDenied(t, dequeue(client, leader.serverSecret()), "may be called only by a server")
	wantDenied(t, dequeue(client, secret), "may be called only by a server")

	// A forwarded read from a server certificate needs no ServerToken, and
	// the user's token still decides what it answers.
	list := func(token string) error {
		args := &structs.JobListRequest{QueryOptions: query(token)}
		args.Forwarded = true
		return peerRPC(t, server, leader.RPCAddr(), "Job.List", args, &structs.JobListResponse{})
	}
	if err := list(secret); err != nil {
		t.Fatalf("a forwarded read from a server certificate with a management token: %v", err)
	}
	requireDenied(t, "a forwarded read without a token", list(""))

	// A user's write through a follower, over TLS, with and without a token.
	cli := peerPool(t, ca, tlstest.CLI)
	if err := acrossElections(t, func() error {
		reg := &structs.JobRegisterRequest{Job: itJob("tls-acl", 1), WriteRequest: write(secret)}
		return peerRPC(t, cli, follower.RPCAddr(), "Job.Register", reg, &structs.JobRegisterResponse{})
	}); err != nil {
		t.Fatalf("register through a follower with a token: %v", err)
	}
	requireDenied(t, "register through a follower without a token", acrossElections(t, func() error {
		reg := &structs.JobRegisterRequest{Job: itJob("tls-anon", 1), WriteRequest: write("")}
		return peerRPC(t, cli, follower.RPCAddr(), "Job.Register", reg, &structs.JobRegisterResponse{})
	}))
}
