package clienttest

import (
	"context"
	"strings"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// The fake checks node identity as the real server does, so a client that
// forgets its secret on any call fails its tests against the fake too.
func TestFakeServerChecksNodeIdentityOnEveryCall(t *testing.T) {
	f := NewFakeServer(0)
	ctx := context.Background()
	nodes := map[string]*structs.Node{}
	for _, id := range []string{"n1", "n2"} {
		n := &structs.Node{ID: id, SecretID: structs.GenerateUUID(), Name: id, Datacenter: "dc1"}
		nodes[id] = n
		if err := f.RPC(ctx, "Node.Register", &structs.NodeRegisterRequest{Node: n}, &structs.NodeUpdateResponse{}); err != nil {
			t.Fatal(err)
		}
	}
	n1, n2 := nodes["n1"], nodes["n2"]
	a1 := f.UpsertAlloc(&structs.Allocation{ID: "a1", NodeID: "n1"})
	a2 := f.UpsertAlloc(&structs.Allocation{ID: "a2", NodeID: "n2"})
	running := func(a *structs.Allocation) []*structs.Allocation {
		return []*structs.Allocation{{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning}}
	}

	refused := []struct {
		name, method string
		args, reply  any
		want         string
	}{
		{"re-registration with another secret", "Node.Register",
			&structs.NodeRegisterRequest{Node: &structs.Node{ID: "n1", SecretID: n2.SecretID, Name: "n1", Datacenter: "dc1"}}, &structs.NodeUpdateResponse{}, "does not match"},
		{"heartbeat without a secret", "Node.UpdateStatus",
			&structs.NodeUpdateStatusRequest{NodeID: "n1", Status: structs.NodeStatusDown}, &structs.NodeUpdateResponse{}, "secret ID is missing"},
		{"assignment read with another node's secret", "Node.GetClientAllocs",
			&structs.NodeSpecificRequest{NodeID: "n1", SecretID: n2.SecretID}, &structs.NodeClientAllocsResponse{}, "does not match"},
		{"alloc read without a secret", "Alloc.GetAllocs",
			&structs.AllocsGetRequest{AllocIDs: []string{"a1"}, NodeID: "n1"}, &structs.AllocsGetResponse{}, "secret ID is missing"},
		{"update without an identity", "Node.UpdateAlloc",
			&structs.AllocUpdateRequest{Alloc: running(a1)}, &structs.GenericResponse{}, "node ID is missing"},
		{"update of another node's alloc", "Node.UpdateAlloc",
			&structs.AllocUpdateRequest{NodeID: "n1", SecretID: n1.SecretID, Alloc: append(running(a1), running(a2)...)}, &structs.GenericResponse{}, "placed on node n2"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			err := f.RPC(ctx, c.method, c.args, c.reply)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want a refusal saying %q, got %v", c.want, err)
			}
		})
	}
	if len(f.Updates()) != 0 || f.Alloc("a1").ClientStatus != structs.AllocClientStatusPending || f.Node("n1").Status != structs.NodeStatusReady {
		t.Fatal("a refused call changed the fake's state")
	}

	var got structs.AllocsGetResponse
	if err := f.RPC(ctx, "Alloc.GetAllocs", &structs.AllocsGetRequest{AllocIDs: []string{"a1", "a2"}, NodeID: "n1", SecretID: n1.SecretID}, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Allocs) != 1 || got.Allocs[0].ID != "a1" {
		t.Fatalf("a node reading its allocs got %d of them, want only a1", len(got.Allocs))
	}
	if err := f.RPC(ctx, "Node.UpdateAlloc", &structs.AllocUpdateRequest{NodeID: "n1", SecretID: n1.SecretID, Alloc: running(a1)}, &structs.GenericResponse{}); err != nil {
		t.Fatalf("the node's own update was refused: %v", err)
	}
}
