package command

import (
	"slices"
	"strings"
	"testing"
)

func TestServerJoinSendsEveryAddress(t *testing.T) {
	f := newFakeAgent(t).json("PUT /v1/agent/join", `{"num_joined":2,"error":""}`)
	res := runCLI(t, f, "", "server", "join", "10.0.0.2:4647", "10.0.0.3:4647")
	if res.code != 0 || !strings.Contains(res.stdout, "Joined 2 servers successfully") {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	got := f.requests("PUT /v1/agent/join")[0].query["address"]
	if !slices.Equal(got, []string{"10.0.0.2:4647", "10.0.0.3:4647"}) {
		t.Fatalf("addresses sent: %v", got)
	}

	// A partial join reports both what joined and what did not.
	f.json("PUT /v1/agent/join", `{"num_joined":1,"error":"contacting 10.0.0.3:4647: connection refused"}`)
	res = runCLI(t, f, "", "server", "join", "10.0.0.2:4647", "10.0.0.3:4647")
	if res.code != 1 || !strings.Contains(res.stdout, "Joined 1 servers") || !strings.Contains(res.stderr, "connection refused") {
		t.Fatalf("partial join: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}

	if res := runCLI(t, f, "", "server", "join"); res.code != 1 || !strings.Contains(res.stderr, "at least one address") {
		t.Fatalf("no address: exit %d %s", res.code, res.stderr)
	}
}

func TestOperatorRaftRemovePeer(t *testing.T) {
	f := newFakeAgent(t).json("DELETE /v1/operator/raft/peer", ``)
	if res := runCLI(t, f, "", "operator", "raft", "remove-peer", "-peer-address=10.0.0.2:4647"); res.code != 0 ||
		!strings.Contains(res.stdout, `Removed peer with address "10.0.0.2:4647"`) {
		t.Fatalf("by address: exit %d %s%s", res.code, res.stdout, res.stderr)
	}
	if res := runCLI(t, f, "", "operator", "raft", "remove-peer", "-peer-id=abc"); res.code != 0 {
		t.Fatalf("by id: exit %d %s", res.code, res.stderr)
	}
	reqs := f.requests("DELETE /v1/operator/raft/peer")
	if len(reqs) != 2 || reqs[0].query.Get("address") != "10.0.0.2:4647" || reqs[1].query.Get("id") != "abc" {
		t.Fatalf("requests: %+v", reqs)
	}
	for _, args := range [][]string{{}, {"-peer-id=a", "-peer-address=b:1"}} {
		res := runCLI(t, f, "", append([]string{"operator", "raft", "remove-peer"}, args...)...)
		if res.code != 1 || !strings.Contains(res.stderr, "exactly one of -peer-address or -peer-id") {
			t.Errorf("%v: exit %d %s", args, res.code, res.stderr)
		}
	}
	if n := len(f.requests("DELETE /v1/operator/raft/peer")); n != 2 {
		t.Fatalf("a refused command sent a request (%d)", n)
	}
	f.on("DELETE /v1/operator/raft/peer", reply{status: 404, body: "no raft peer with id zzz"})
	if res := runCLI(t, f, "", "operator", "raft", "remove-peer", "-peer-id=zzz"); res.code != 1 || !strings.Contains(res.stderr, "no raft peer with id zzz") {
		t.Fatalf("unknown: exit %d %s", res.code, res.stderr)
	}
}
