package nomad

import (
	"context"
	"reflect"
	"testing"
	"time"

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
	s := TestServer(t, func(c *Config) { c.Clock = NewFakeClock(time.Unix(1_800_000_000, 0)) })
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
	return j
}

// call is one RPC from the attacker's own connection.
func (f *identityFixture) call(method string, args, reply any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return f.pool.RPC(ctx, f.s.RPCAddr(), method, args, reply)
}

// identityState is what a forged call could have changed.
// assertUnchanged fails unless nothing a forged call could touch changed.
// wantRefused fails unless err is a refusal whose text contains want.
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
		if out.Node.Attributes["kernel.name"] != "linux" {
			t.Fatalf("the answer lost the node's other fields: %v", out.Node.Attributes)
		}
	}
	// The secret was removed from a copy, not from the stored node.
	if n, _ := f.s.State().NodeByID(nil, f.victim.ID); n.SecretID != f.victim.SecretID {
		t.Fatalf("the state store's node lost its secret: %q", n.SecretID)
	}
}

// The operator actions on a node are not the node's own calls: they take
// no secret (an ACL pass gates them with node:write), and still work.
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
