package allocsync

import (
	"errors"
	"fmt"
	"testing"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// An update refused because of who sent it (the node unknown to the
// servers, or its secret refused) is about the node, not the update: it is
// held and sent again once the node has registered or heartbeated, never
// dropped. Only what the servers judged the update itself for is dropped.
func TestRefusedOnMeritTellsTheUpdateFromTheNode(t *testing.T) {
	// remote is a handler's error as the servers' answer brings it.
	remote := func(format string, sentinel error) error {
		return rpcx.NewRemoteError(fmt.Errorf(format, sentinel))
	}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"an invalid transition", &rpcx.RemoteError{Text: "bad request: alloc a1: invalid allocation transition"}, true},
		{"another node's alloc", &rpcx.RemoteError{Text: "bad request: alloc a1 is placed on node n2, not on n1"}, true},
		{"the node is not ready", remote("node n1 is down, heartbeat first: %w", structs.ErrNodeNotReady), false},
		{"no leader", remote("%w", structs.ErrNoLeader), false},
		{"the node is unknown", remote("node n1: %w", structs.ErrNotFound), false},
		{"the secret is refused", remote("node n1: %w", structs.ErrNodeSecretDenied), false},
		{"the secret is missing", remote("node n1: %w", structs.ErrNodeSecretMissing), false},
		{"a transport failure", errors.New("connection refused"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := RefusedOnMerit(c.err); got != c.want {
				t.Fatalf("RefusedOnMerit(%q) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}
