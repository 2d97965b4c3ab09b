package nomad

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// A drain's meta (the operator's message) is kept in LastDrain; meta past
// its bounds is refused naming what was wrong, and the refused request
// changes nothing.
func TestNodeDrainKeepsBoundedMeta(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	registerNode(t, s, itNode("n1"))
	drain := func(meta map[string]string, spec *structs.DrainStrategy) error {
		var resp structs.NodeDrainUpdateResponse
		return s.RPC("Node.UpdateDrain", &structs.NodeUpdateDrainRequest{NodeID: "n1", DrainStrategy: spec, Meta: meta}, &resp)
	}
	hour := &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour}}
	if err := drain(map[string]string{"message": "kernel upgrade"}, hour); err != nil {
		t.Fatal(err)
	}
	n, _ := s.State().NodeByID(nil, "n1")
	if n.LastDrain == nil || n.LastDrain.Meta["message"] != "kernel upgrade" {
		t.Fatalf("LastDrain = %+v, want the drain's message kept", n.LastDrain)
	}
	before := n.ModifyIndex

	big := map[string]string{"message": strings.Repeat("x", maxDrainMetaValueBytes+1)}
	many := map[string]string{}
	for i := 0; i <= maxDrainMetaKeys; i++ {
		many[strings.Repeat("k", i+1)] = "v"
	}
	for name, meta := range map[string]map[string]string{"value too long": big, "too many keys": many,
		"empty key": {"": "v"}, "key too long": {strings.Repeat("k", maxDrainMetaKeyBytes+1): "v"}} {
		err := drain(meta, nil)
		if err == nil || !strings.Contains(err.Error(), "drain Meta") {
			t.Fatalf("%s: err = %v, want a refusal naming drain Meta", name, err)
		}
	}
	n, _ = s.State().NodeByID(nil, "n1")
	if n.ModifyIndex != before || n.DrainStrategy == nil || n.LastDrain.Meta["message"] != "kernel upgrade" {
		t.Fatalf("a refused request changed the node: index %d→%d, drain %v, meta %v", before, n.ModifyIndex, n.DrainStrategy, n.LastDrain.Meta)
	}

	// Ending the drain without meta keeps the message; with meta replaces it.
	if err := drain(nil, nil); err != nil {
		t.Fatal(err)
	}
	n, _ = s.State().NodeByID(nil, "n1")
	if n.LastDrain.Status != "canceled" || n.LastDrain.Meta["message"] != "kernel upgrade" {
		t.Fatalf("after ending the drain: %+v", n.LastDrain)
	}
	if err := drain(map[string]string{"message": "again"}, hour); err != nil {
		t.Fatal(err)
	}
	n, _ = s.State().NodeByID(nil, "n1")
	if n.LastDrain.Meta["message"] != "again" || len(n.LastDrain.Meta) != 1 {
		t.Fatalf("a new drain's meta: %v", n.LastDrain.Meta)
	}
}

// LastDrain.AccessorID says whose token started a drain, and whose token
// last changed or ended it; the leader's drainer, finishing a drain, does
// not overwrite it. Without ACLs it stays empty.
func TestNodeDrainRecordsTheAccessorOfTheTokenThatAsked(t *testing.T) {
	t.Parallel()
	s := aclServer(t, nil)
	root := bootstrapACL(t, s)
	upsertPolicy(t, s, root.SecretID, "nodes", `node { policy = "write" }`)
	ops := createToken(t, s, root.SecretID, &structs.ACLToken{Name: "ops", Type: structs.ACLClientToken, Policies: []string{"nodes"}})
	registerNode(t, s, itNode("n1"))
	accessor := func() string {
		t.Helper()
		n, _ := s.State().NodeByID(nil, "n1")
		if n.LastDrain == nil {
			t.Fatal("no LastDrain")
		}
		return n.LastDrain.AccessorID
	}
	drain := func(secret string, spec *structs.DrainStrategy) {
		t.Helper()
		req := &structs.NodeUpdateDrainRequest{NodeID: "n1", DrainStrategy: spec, WriteRequest: write(secret)}
		if err := s.RPC("Node.UpdateDrain", req, &structs.NodeDrainUpdateResponse{}); err != nil {
			t.Fatal(err)
		}
	}
	hour := &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour}}

	drain(ops.SecretID, hour)
	if got := accessor(); got != ops.AccessorID {
		t.Fatalf("started by ops: AccessorID %q, want %q", got, ops.AccessorID)
	}
	drain(root.SecretID, nil) // ended by another operator
	if got := accessor(); got != root.AccessorID {
		t.Fatalf("ended by root: AccessorID %q, want %q", got, root.AccessorID)
	}

	// A caller cannot name someone else: the endpoint sets it.
	req := &structs.NodeUpdateDrainRequest{NodeID: "n1", DrainStrategy: hour, AccessorID: root.AccessorID, WriteRequest: write(ops.SecretID)}
	if err := s.RPC("Node.UpdateDrain", req, &structs.NodeDrainUpdateResponse{}); err != nil {
		t.Fatal(err)
	}
	if got := accessor(); got != ops.AccessorID {
		t.Fatalf("a caller-supplied AccessorID was kept: %q, want %q", got, ops.AccessorID)
	}

	// The drainer completes it (nothing runs on n1) and keeps the accessor.
	WaitFor(t, 10*time.Second, func() (bool, string) { return drainDone(s, "n1") })
	n, _ := s.State().NodeByID(nil, "n1")
	if n.LastDrain.Status != "complete" || n.LastDrain.AccessorID != ops.AccessorID {
		t.Fatalf("after the drainer completed it: %+v", n.LastDrain)
	}
}
