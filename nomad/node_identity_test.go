package nomad

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// These tests play an attacker who can reach the RPC port and nothing
// else: a connection pool of its own dialling the server's real listener,
// as any peer would. It can read what any caller reads (node IDs, alloc
// IDs) and can register a node of its own, but does not know another
// node's secret. Every forged call must be refused and change nothing.

// identityFixture is a server with two nodes registered the way a client
// registers: the victim, running one alloc, and a node the attacker
// registered itself (with its own secret), running another.
type identityFixture struct {
	s                     *Server
	victim, own           *structs.Node
	victimAlloc, ownAlloc *structs.Allocation
	pool                  *rpcx.ConnPool
}

func newIdentityFixture(t *testing.T) *identityFixture {
	t.Helper()
	// A fake clock: no node misses a heartbeat while the test runs.
	s := testServer(t, func(c *Config) { c.Clock = clock.NewFake(time.Unix(1_800_000_000, 0)) })
	WaitForLeader(t, 5*time.Second, s)
	f := &identityFixture{s: s, victim: itNode("victim"), own: itNode("attacker")}
	registerNode(t, s, f.victim)
	registerNode(t, s, f.own)
	f.victimAlloc = placeOne(t, s, pinnedJob("victim-job", f.victim.ID))
	f.ownAlloc = placeOne(t, s, pinnedJob("attacker-job", f.own.ID))
	for _, job := range []string{"victim-job", "attacker-job"} {
		WaitFor(t, 10*time.Second, func() (bool, string) { return allEvalsDone(s, job) })
	}
	f.victimAlloc, _ = s.State().AllocByID(nil, f.victimAlloc.ID)
	f.ownAlloc, _ = s.State().AllocByID(nil, f.ownAlloc.ID)
	f.pool = rpcx.NewConnPool(rpcx.PoolConfig{})
	t.Cleanup(f.pool.Shutdown)
	return f
}

// pinnedJob is a one-alloc service job that may only run on nodeID.
func pinnedJob(id, nodeID string) *structs.Job {
	j := itJob(id, 1)
	j.Constraints = []*structs.Constraint{{LTarget: "${node.unique.id}", RTarget: nodeID, Operand: "="}}
	return withTestServices(j)
}

// call is one RPC from the attacker's own connection.
func (f *identityFixture) call(method string, args, reply any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return f.pool.RPC(ctx, f.s.RPCAddr(), method, args, reply)
}

// identityState is what a forged call could have changed.
type identityState struct {
	nodes  map[string]structs.Node
	allocs map[string]structs.Allocation
	evals  int
}

func (f *identityFixture) state(t *testing.T) identityState {
	t.Helper()
	st := f.s.State()
	out := identityState{nodes: map[string]structs.Node{}, allocs: map[string]structs.Allocation{}}
	for _, id := range []string{f.victim.ID, f.own.ID} {
		n, err := st.NodeByID(nil, id)
		if err != nil || n == nil {
			t.Fatalf("node %s: %v", id, err)
		}
		out.nodes[id] = *n.Copy()
	}
	for _, id := range []string{f.victimAlloc.ID, f.ownAlloc.ID} {
		a, err := st.AllocByID(nil, id)
		if err != nil || a == nil {
			t.Fatalf("alloc %s: %v", id, err)
		}
		out.allocs[id] = *a
	}
	it, err := st.Evals(nil)
	if err != nil {
		t.Fatal(err)
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out.evals++
	}
	return out
}

// assertUnchanged fails unless nothing a forged call could touch changed.
func (f *identityFixture) assertUnchanged(t *testing.T, before identityState) {
	t.Helper()
	after := f.state(t)
	for id, b := range before.nodes {
		a := after.nodes[id]
		if a.Status != b.Status || a.ModifyIndex != b.ModifyIndex || a.SecretID != b.SecretID || !reflect.DeepEqual(a.Attributes, b.Attributes) {
			t.Errorf("node %s changed: status %s -> %s, modify index %d -> %d, attributes %v -> %v",
				id, b.Status, a.Status, b.ModifyIndex, a.ModifyIndex, b.Attributes, a.Attributes)
		}
	}
	for id, b := range before.allocs {
		a := after.allocs[id]
		if a.ClientStatus != b.ClientStatus || a.DesiredStatus != b.DesiredStatus || a.ModifyIndex != b.ModifyIndex {
			t.Errorf("alloc %s changed: client status %s -> %s, desired %s -> %s, modify index %d -> %d",
				id, b.ClientStatus, a.ClientStatus, b.DesiredStatus, a.DesiredStatus, b.ModifyIndex, a.ModifyIndex)
		}
	}
	if after.evals != before.evals {
		t.Errorf("%d evaluations were created", after.evals-before.evals)
	}
}

// wantRefused fails unless err is a refusal whose text contains want.
func wantRefused(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("a forged call was accepted; want a refusal containing %q", want)
	}
	if !rpcx.IsRemoteError(err) {
		t.Fatalf("want the server's refusal, got a transport error: %v", err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("refusal %q does not say %q", err, want)
	}
}

func TestNodeGetNodeOverRPCDoesNotCarryTheSecret(t *testing.T) {
	f := newIdentityFixture(t)
	for _, secret := range []string{"", structs.GenerateUUID(), f.victim.SecretID} {
		var out structs.SingleNodeResponse
		if err := f.call("Node.GetNode", &structs.NodeSpecificRequest{NodeID: f.victim.ID, SecretID: secret}, &out); err != nil {
			t.Fatal(err)
		}
		if out.Node == nil || out.Node.ID != f.victim.ID {
			t.Fatalf("Node.GetNode did not answer the node: %+v", out.Node)
		}
		if out.Node.SecretID != "" {
			t.Fatalf("Node.GetNode answered the node's secret %q", out.Node.SecretID)
		}
		if out.Node.Attributes.Value("kernel.name") != "linux" {
			t.Fatalf("the answer lost the node's other fields: %v", out.Node.Attributes)
		}
	}
	// The secret was removed from a copy, not from the stored node.
	if n, _ := f.s.State().NodeByID(nil, f.victim.ID); n.SecretID != f.victim.SecretID {
		t.Fatalf("the state store's node lost its secret: %q", n.SecretID)
	}
}

func TestForgedHeartbeatIsRefused(t *testing.T) {
	f := newIdentityFixture(t)
	cases := []struct {
		name, secret, status, want string
	}{
		{"no secret marks the node down", "", structs.NodeStatusDown, "node secret ID is missing"},
		{"no secret marks the node disconnected", "", structs.NodeStatusDisconnected, "node secret ID is missing"},
		{"no secret marks the node initializing", "", structs.NodeStatusInit, "node secret ID is missing"},
		{"no secret keeps the node's timer alive", "", structs.NodeStatusReady, "node secret ID is missing"},
		{"a made-up secret marks the node down", structs.GenerateUUID(), structs.NodeStatusDown, "node secret ID does not match"},
		{"another node's secret marks the node down", f.own.SecretID, structs.NodeStatusDown, "node secret ID does not match"},
		{"the node ID as its secret", f.victim.ID, structs.NodeStatusDown, "node secret ID does not match"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := f.state(t)
			var resp structs.NodeUpdateResponse
			err := f.call("Node.UpdateStatus", &structs.NodeUpdateStatusRequest{NodeID: f.victim.ID, SecretID: c.secret, Status: c.status}, &resp)
			wantRefused(t, err, c.want)
			if resp.HeartbeatTTL != 0 {
				t.Errorf("a refused heartbeat was given a TTL: %s", resp.HeartbeatTTL)
			}
			f.assertUnchanged(t, before)
		})
	}
}

func TestForgedRegistrationIsRefused(t *testing.T) {
	f := newIdentityFixture(t)
	// What any caller can read about the node, secret included if leaked.
	var got structs.SingleNodeResponse
	if err := f.call("Node.GetNode", &structs.NodeSpecificRequest{NodeID: f.victim.ID}, &got); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, secret, want string
	}{
		{"the secret Node.GetNode answered", got.Node.SecretID, "node secret ID is missing"},
		{"a made-up secret", structs.GenerateUUID(), "node secret ID does not match"},
		{"the attacker's own node's secret", f.own.SecretID, "node secret ID does not match"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := f.state(t)
			forged := got.Node.Copy()
			forged.SecretID = c.secret
			forged.Attributes = forged.Attributes.With("kernel.name", "forged")
			forged.Meta = map[string]string{"owner": "attacker"}
			var resp structs.NodeUpdateResponse
			err := f.call("Node.Register", &structs.NodeRegisterRequest{Node: forged}, &resp)
			wantRefused(t, err, c.want)
			f.assertUnchanged(t, before)
		})
	}
}

func TestForgedAllocUpdateIsRefused(t *testing.T) {
	f := newIdentityFixture(t)
	failed := func(a *structs.Allocation) *structs.Allocation {
		return &structs.Allocation{ID: a.ID, NodeID: a.NodeID, ClientStatus: structs.AllocClientStatusFailed}
	}
	complete := func(a *structs.Allocation) *structs.Allocation {
		return &structs.Allocation{ID: a.ID, NodeID: a.NodeID, ClientStatus: structs.AllocClientStatusComplete}
	}
	cases := []struct {
		name             string
		nodeID, secretID string
		allocs           []*structs.Allocation
		want             string
	}{
		{"no identity at all", "", "", []*structs.Allocation{failed(f.victimAlloc)}, "node ID is missing"},
		{"the victim's node ID without a secret", f.victim.ID, "", []*structs.Allocation{failed(f.victimAlloc)}, "node secret ID is missing"},
		{"the victim's node ID with a made-up secret", f.victim.ID, structs.GenerateUUID(), []*structs.Allocation{failed(f.victimAlloc)}, "node secret ID does not match"},
		{"the victim's node ID with another node's secret", f.victim.ID, f.own.SecretID, []*structs.Allocation{failed(f.victimAlloc)}, "node secret ID does not match"},
		{"the attacker's node reports the victim's alloc", f.own.ID, f.own.SecretID, []*structs.Allocation{failed(f.victimAlloc)}, "is placed on node victim, not on attacker"},
		{"the attacker's node hides a foreign alloc in a batch of its own", f.own.ID, f.own.SecretID,
			[]*structs.Allocation{complete(f.ownAlloc), failed(f.victimAlloc)}, "is placed on node victim, not on attacker"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := f.state(t)
			var resp structs.GenericResponse
			err := f.call("Node.UpdateAlloc", &structs.AllocUpdateRequest{NodeID: c.nodeID, SecretID: c.secretID, Alloc: c.allocs}, &resp)
			wantRefused(t, err, c.want)
			f.assertUnchanged(t, before)
		})
	}
}

func TestForgedClientAllocsReadIsRefused(t *testing.T) {
	f := newIdentityFixture(t)
	cases := []struct {
		name, secret, want string
	}{
		{"no secret", "", "node secret ID is missing"},
		{"a made-up secret", structs.GenerateUUID(), "node secret ID does not match"},
		{"another node's secret", f.own.SecretID, "node secret ID does not match"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var resp structs.NodeClientAllocsResponse
			err := f.call("Node.GetClientAllocs", &structs.NodeSpecificRequest{NodeID: f.victim.ID, SecretID: c.secret}, &resp)
			wantRefused(t, err, c.want)
			if len(resp.Allocs) != 0 {
				t.Fatalf("a refused read answered the node's assignment: %v", resp.Allocs)
			}
		})
	}
}

func TestAllocGetAllocsForANodeAnswersOnlyThatNodesAllocs(t *testing.T) {
	f := newIdentityFixture(t)
	both := []string{f.victimAlloc.ID, f.ownAlloc.ID}

	var resp structs.AllocsGetResponse
	err := f.call("Alloc.GetAllocs", &structs.AllocsGetRequest{AllocIDs: both, NodeID: f.own.ID, SecretID: f.own.SecretID}, &resp)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Allocs) != 1 || resp.Allocs[0].ID != f.ownAlloc.ID {
		ids := []string{}
		for _, a := range resp.Allocs {
			ids = append(ids, a.ID)
		}
		t.Fatalf("a node reading its allocs was answered %v, want only its own %s", ids, f.ownAlloc.ID)
	}

	cases := []struct {
		name, nodeID, secret, want string
	}{
		{"the victim's node ID without a secret", f.victim.ID, "", "node secret ID is missing"},
		{"the victim's node ID with another node's secret", f.victim.ID, f.own.SecretID, "node secret ID does not match"},
		{"a secret without a node ID", "", f.own.SecretID, "node ID is missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var resp structs.AllocsGetResponse
			err := f.call("Alloc.GetAllocs", &structs.AllocsGetRequest{AllocIDs: both, NodeID: c.nodeID, SecretID: c.secret}, &resp)
			wantRefused(t, err, c.want)
			if len(resp.Allocs) != 0 {
				t.Fatalf("a refused read answered %d allocs", len(resp.Allocs))
			}
		})
	}
}

func TestRegisterRefusesANewNodeWithoutASoundSecret(t *testing.T) {
	t.Parallel()
	f := newIdentityFixture(t)
	uuidID := structs.GenerateUUID()
	cases := []struct {
		name, id, secret, want string
	}{
		{"no secret", "new-1", "", "node secret ID is missing"},
		{"a short word", "new-2", "hunter2", "node secret ID is not a UUID: want 36 characters, hexadecimal digits in groups of 8-4-4-4-12 as the client generates, got 7 characters"},
		{"36 characters that are not a UUID", "new-3", strings.Repeat("z", 36), "node secret ID is not a UUID"},
		{"a huge secret", "new-4", strings.Repeat("a", 1<<20), "got 1048576 characters"},
		{"the node's own ID", uuidID, uuidID, "node secret ID must not be the node ID"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := f.state(t)
			n := itNode(c.id)
			n.SecretID = c.secret
			var resp structs.NodeUpdateResponse
			err := f.call("Node.Register", &structs.NodeRegisterRequest{Node: n}, &resp)
			wantRefused(t, err, c.want)
			if got, _ := f.s.State().NodeByID(nil, c.id); got != nil {
				t.Fatalf("the refused node %s was stored", c.id)
			}
			f.assertUnchanged(t, before)
		})
	}
}

// The operator actions on a node are not the node's own calls: they take
// no secret (an ACL pass gates them with node:write), and still work.
func TestOperatorNodeActionsNeedNoNodeSecret(t *testing.T) {
	t.Parallel()
	f := newIdentityFixture(t)
	var elig structs.NodeEligibilityUpdateResponse
	if err := f.call("Node.UpdateEligibility", &structs.NodeUpdateEligibilityRequest{NodeID: f.own.ID, Eligibility: structs.NodeSchedulingIneligible}, &elig); err != nil {
		t.Fatalf("eligibility: %v", err)
	}
	var eval structs.NodeUpdateResponse
	if err := f.call("Node.Evaluate", &structs.NodeEvaluateRequest{NodeID: f.own.ID}, &eval); err != nil {
		t.Fatalf("evaluate: %v", err)
	}
	if n, _ := f.s.State().NodeByID(nil, f.own.ID); n.SchedulingEligibility != structs.NodeSchedulingIneligible {
		t.Fatalf("eligibility not changed: %s", n.SchedulingEligibility)
	}
	if len(eval.EvalIDs) != 1 {
		t.Fatalf("want one eval for the node's job, got %v", eval.EvalIDs)
	}
}

// No answer but Node.GetNode's (which sanitizes it, tested above) may hold
// a structs.Node, because a Node holds its secret. This walks the reply
// type of every endpoint method, so a new answer that embeds nodes fails
// here until it sanitizes them and is added to the allowed list.
func TestNoRPCAnswerCarriesANodeUnlessSanitized(t *testing.T) {
	allowed := map[string]bool{"Node.GetNode: SingleNodeResponse.Node": true}
	endpoints := map[string]any{
		"Status": &Status{}, "KV": &KV{}, "Operator": &Operator{}, "Job": &Job{}, "Node": &Node{},
		"Alloc": &Alloc{}, "Eval": &Eval{}, "Plan": &Plan{}, "Deployment": &Deployment{}, "System": &System{},
	}
	nodeType := reflect.TypeOf(structs.Node{})
	errType := reflect.TypeOf((*error)(nil)).Elem()
	methods := 0
	for name, e := range endpoints {
		typ := reflect.TypeOf(e)
		for i := 0; i < typ.NumMethod(); i++ {
			m := typ.Method(i)
			// RPC methods: (receiver, args, reply) error.
			if m.Type.NumIn() != 3 || m.Type.NumOut() != 1 || m.Type.Out(0) != errType || m.Type.In(2).Kind() != reflect.Pointer {
				continue
			}
			methods++
			reply := m.Type.In(2).Elem()
			for _, path := range pathsTo(reply, nodeType, reply.Name(), map[reflect.Type]bool{}) {
				key := name + "." + m.Name + ": " + path
				if !allowed[key] {
					t.Errorf("%s: the answer can carry a structs.Node, and so its SecretID; answer a Sanitize()d copy and list it here", key)
				}
			}
		}
	}
	if methods < 40 {
		t.Fatalf("found only %d RPC methods; the walk is broken", methods)
	}
}

// pathsTo lists the field paths from t to a value of type target.
func pathsTo(t, target reflect.Type, path string, seen map[reflect.Type]bool) []string {
	if t == target {
		return []string{path}
	}
	if seen[t] {
		return nil
	}
	seen[t] = true
	defer delete(seen, t)
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return pathsTo(t.Elem(), target, path, seen)
	case reflect.Map:
		return append(pathsTo(t.Key(), target, path, seen), pathsTo(t.Elem(), target, path, seen)...)
	case reflect.Struct:
		var out []string
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			out = append(out, pathsTo(f.Type, target, path+"."+f.Name, seen)...)
		}
		return out
	}
	return nil
}
