package client

import (
	"errors"
	"net/rpc"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// An update refused because of who sent it (the node unknown to the
// servers, or its secret refused) is about the node, not the update: it is
// held and sent again once the node has registered or heartbeated, never
// dropped. Only what the servers judged the update itself for is dropped.
func TestRefusedOnMeritTellsTheUpdateFromTheNode(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"an invalid transition", rpc.ServerError("bad request: alloc a1: invalid allocation transition"), true},
		{"another node's alloc", rpc.ServerError("bad request: alloc a1 is placed on node n2, not on n1"), true},
		{"the node is not ready", rpc.ServerError("node n1 is down, heartbeat first: " + structs.ErrNodeNotReady.Error()), false},
		{"no leader", rpc.ServerError(structs.ErrNoLeader.Error()), false},
		{"the node is unknown", rpc.ServerError("node n1: " + structs.ErrNotFound.Error()), false},
		{"the secret is refused", rpc.ServerError("node n1: " + structs.ErrNodeSecretDenied.Error()), false},
		{"the secret is missing", rpc.ServerError("node n1: " + structs.ErrNodeSecretMissing.Error()), false},
		{"a transport failure", errors.New("connection refused"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := refusedOnMerit(c.err); got != c.want {
				t.Fatalf("refusedOnMerit(%q) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}
