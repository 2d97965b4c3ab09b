package agent

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/structs"
)

func TestNodesEndpoints(t *testing.T) {
	a := serverAgent(t)
	n1 := registerNode(t, a, nil)
	n2 := registerNode(t, a, func(n *structs.Node) {
		n.ID = "abcdef01-0000-4000-8000-000000000002"
		n.ReservedResources = nil
	})

	t.Run("list with resources never null", func(t *testing.T) {
		var list []map[string]any
		callOK(t, "GET", a.URL+"/v1/nodes", nil, &list)
		if len(list) != 2 {
			t.Fatalf("nodes: %v", list)
		}
		for _, n := range list {
			if n["NodeResources"] == nil || n["ReservedResources"] == nil || n["Status"] != "ready" {
				t.Fatalf("node stub: %v", n)
			}
		}
	})

	t.Run("read by full ID and by unique prefix", func(t *testing.T) {
		var node structs.Node
		callOK(t, "GET", a.URL+"/v1/node/"+n1.ID, nil, &node)
		if node.ID != n1.ID || node.HTTPAddr != n1.HTTPAddr {
			t.Fatalf("node: %+v", node)
		}
		var byPrefix structs.Node
		callOK(t, "GET", a.URL+"/v1/node/abcd", nil, &byPrefix)
		if byPrefix.ID != n2.ID {
			t.Fatalf("prefix resolved to %s, want %s", byPrefix.ID, n2.ID)
		}
		n3 := registerNode(t, a, func(n *structs.Node) { n.ID = "abcdef02-0000-4000-8000-000000000003" })
		resp, body := call(t, "GET", a.URL+"/v1/node/abcdef", nil)
		requireStatus(t, resp, body, 400, "ambiguous")
		var dereg structs.NodeUpdateResponse
		callOK(t, "DELETE", a.URL+"/v1/node/"+n3.ID, nil, &dereg)
		resp, body = call(t, "GET", a.URL+"/v1/node/"+n3.ID, nil)
		requireStatus(t, resp, body, 404, "not found")
	})

	t.Run("no answer carries a node's secret", func(t *testing.T) {
		for _, path := range []string{"/v1/node/" + n1.ID, "/v1/node/abcd", "/v1/nodes", "/v1/node/" + n1.ID + "/allocations"} {
			resp, body := call(t, "GET", a.URL+path, nil)
			requireStatus(t, resp, body, 200, "")
			for _, n := range []*structs.Node{n1, n2} {
				if strings.Contains(string(body), n.SecretID) {
					t.Fatalf("GET %s answered node %s's secret: %s", path, n.ID, body)
				}
			}
		}
	})

	t.Run("drain and undrain", func(t *testing.T) {
		var out structs.NodeDrainUpdateResponse
		resp := callOK(t, "POST", a.URL+"/v1/node/"+n1.ID+"/drain",
			map[string]any{"DrainSpec": map[string]any{"Deadline": int64(time.Hour), "IgnoreSystemJobs": true}, "Meta": map[string]string{"why": "test"}}, &out)
		if out.NodeModifyIndex == 0 || index(t, resp) == 0 {
			t.Fatalf("drain: %+v", out)
		}
		// n1 runs nothing, so the drainer may complete the drain at once:
		// the node is ineligible either way, and its first drain event
		// records the strategy.
		var node structs.Node
		callOK(t, "GET", a.URL+"/v1/node/"+n1.ID, nil, &node)
		if node.SchedulingEligibility != "ineligible" || node.LastDrain == nil {
			t.Fatalf("drained node: %+v", node)
		}
		if d := node.DrainStrategy; d != nil && (d.Deadline != time.Hour || !d.IgnoreSystemJobs) {
			t.Fatalf("drain strategy: %+v", d)
		}
		var set *structs.NodeEvent
		for _, e := range node.Events {
			if e.Message == "Node drain strategy set" {
				set = e
			}
		}
		if set == nil || set.Details["ignore_system"] != "true" {
			t.Fatalf("no drain start event with the strategy: %+v", node.Events)
		}
		callOK(t, "PUT", a.URL+"/v1/node/"+n1.ID+"/drain", map[string]any{"DrainSpec": nil, "MarkEligible": true}, &out)
		callOK(t, "GET", a.URL+"/v1/node/"+n1.ID, nil, &node)
		if node.DrainStrategy != nil || node.SchedulingEligibility != "eligible" {
			t.Fatalf("undrained node: %+v", node)
		}
	})

	t.Run("eligibility", func(t *testing.T) {
		var out structs.NodeEligibilityUpdateResponse
		callOK(t, "POST", a.URL+"/v1/node/"+n2.ID+"/eligibility", map[string]string{"Eligibility": "ineligible"}, &out)
		var node structs.Node
		callOK(t, "GET", a.URL+"/v1/node/"+n2.ID, nil, &node)
		if node.SchedulingEligibility != "ineligible" {
			t.Fatalf("eligibility: %s", node.SchedulingEligibility)
		}
		resp, body := call(t, "POST", a.URL+"/v1/node/"+n2.ID+"/eligibility", map[string]string{"Eligibility": "maybe"})
		requireStatus(t, resp, body, 400, `"maybe"`)
		resp, body = call(t, "POST", a.URL+"/v1/node/"+n2.ID+"/eligibility", map[string]string{"NodeID": n1.ID, "Eligibility": "eligible"})
		requireStatus(t, resp, body, 400, "does not match")
	})

	t.Run("allocations on a node", func(t *testing.T) {
		registerJob(t, a, mockJob("on-node", 1))
		var allocs []*structs.Allocation
		waitUntil(t, "the alloc on n1", func() bool {
			callOK(t, "GET", a.URL+"/v1/node/"+n1.ID+"/allocations", nil, &allocs)
			return len(allocs) == 1
		})
		if allocs[0].JobID != "on-node" || allocs[0].Job == nil {
			t.Fatalf("node allocs: %+v", allocs[0])
		}
	})

	t.Run("node evaluate creates an eval for the node's job", func(t *testing.T) {
		resp, body := call(t, "POST", a.URL+"/v1/node/"+n1.ID+"/evaluate", nil)
		requireStatus(t, resp, body, http.StatusOK, `"EvalIDs":["`)
		resp, body = call(t, "POST", a.URL+"/v1/node/no-such-node/evaluate", nil)
		requireStatus(t, resp, body, http.StatusNotFound, "not found")
	})
}

func TestAllocAndEvalEndpoints(t *testing.T) {
	a := serverAgent(t)
	node := registerNode(t, a, nil)
	reg := registerJob(t, a, mockJob("svc", 1))

	var allocs []*structs.AllocListStub
	waitUntil(t, "an allocation", func() bool {
		callOK(t, "GET", a.URL+"/v1/allocations", nil, &allocs)
		return len(allocs) == 1
	})
	id := allocs[0].ID

	t.Run("read alloc by ID and prefix", func(t *testing.T) {
		var alloc structs.Allocation
		callOK(t, "GET", a.URL+"/v1/allocation/"+id, nil, &alloc)
		if alloc.ID != id || alloc.NodeID != node.ID || alloc.EvalID != reg.EvalID {
			t.Fatalf("alloc: %+v", alloc)
		}
		var byPrefix structs.Allocation
		callOK(t, "GET", a.URL+"/v1/allocation/"+id[:8], nil, &byPrefix)
		if byPrefix.ID != id {
			t.Fatalf("prefix: %s", byPrefix.ID)
		}
	})

	t.Run("evaluations filter and read", func(t *testing.T) {
		var evals []*structs.Evaluation
		callOK(t, "GET", a.URL+"/v1/evaluations?job=svc", nil, &evals)
		if len(evals) == 0 {
			t.Fatal("no evals for svc")
		}
		for _, e := range evals {
			if e.JobID != "svc" {
				t.Fatalf("filter leaked %s", e.JobID)
			}
		}
		callOK(t, "GET", a.URL+"/v1/evaluations?job=other", nil, &evals)
		if len(evals) != 0 {
			t.Fatalf("job filter: %v", evals)
		}
		var ev structs.Evaluation
		callOK(t, "GET", a.URL+"/v1/evaluation/"+reg.EvalID, nil, &ev)
		if ev.ID != reg.EvalID || ev.JobID != "svc" {
			t.Fatalf("eval: %+v", ev)
		}
		var evAllocs []*structs.AllocListStub
		callOK(t, "GET", a.URL+"/v1/evaluation/"+reg.EvalID+"/allocations", nil, &evAllocs)
		if len(evAllocs) != 1 || evAllocs[0].ID != id {
			t.Fatalf("eval allocs: %+v", evAllocs)
		}
	})

	t.Run("stop alloc", func(t *testing.T) {
		var out structs.AllocStopResponse
		resp := callOK(t, "POST", a.URL+"/v1/allocation/"+id+"/stop", nil, &out)
		if out.EvalID == "" || out.Index == 0 || index(t, resp) != out.Index {
			t.Fatalf("stop: %+v", out)
		}
	})
}

func TestClusterEndpoints(t *testing.T) {
	a := serverAgent(t)

	var leader string
	callOK(t, "GET", a.URL+"/v1/status/leader", nil, &leader)
	if leader != a.RPCAddr() {
		t.Fatalf("leader %q, want %q", leader, a.RPCAddr())
	}
	var peers []string
	callOK(t, "GET", a.URL+"/v1/status/peers", nil, &peers)
	if len(peers) != 1 || peers[0] != a.RPCAddr() {
		t.Fatalf("peers: %v", peers)
	}
	var raft structs.RaftConfigurationResponse
	callOK(t, "GET", a.URL+"/v1/operator/raft/configuration", nil, &raft)
	if len(raft.Servers) != 1 || !raft.Servers[0].Leader || !raft.Servers[0].Voter || raft.Servers[0].Address != a.RPCAddr() {
		t.Fatalf("raft: %+v", raft.Servers)
	}
	var members struct {
		ServerName, ServerRegion, ServerDC string
		Members                            []api.AgentMember
	}
	callOK(t, "GET", a.URL+"/v1/agent/members", nil, &members)
	if members.ServerRegion != "global" || len(members.Members) != 1 || members.Members[0].Status != "alive" ||
		members.Members[0].Tags["role"] != "nomad" || members.Members[0].Tags["region"] != "global" {
		t.Fatalf("members: %+v", members)
	}
	var self struct {
		Config map[string]any
		Member api.AgentMember
		Stats  map[string]map[string]string
	}
	callOK(t, "GET", a.URL+"/v1/agent/self", nil, &self)
	if self.Config["Region"] != "global" || self.Config["Datacenter"] != "dc1" || self.Member.Name == "" ||
		self.Stats["nomad"]["leader"] != "true" {
		t.Fatalf("self: %+v", self)
	}
	var health map[string]map[string]any
	callOK(t, "GET", a.URL+"/v1/agent/health", nil, &health)
	if health["server"]["ok"] != true {
		t.Fatalf("health: %v", health)
	}
	var regions []string
	callOK(t, "GET", a.URL+"/v1/regions", nil, &regions)
	var namespaces []map[string]any
	callOK(t, "GET", a.URL+"/v1/namespaces", nil, &namespaces)
	if len(regions) != 1 || regions[0] != "global" || len(namespaces) != 1 || namespaces[0]["Name"] != "default" {
		t.Fatalf("regions %v namespaces %v", regions, namespaces)
	}
	callOK(t, "PUT", a.URL+"/v1/system/gc", nil, nil)
	var deps []any
	callOK(t, "GET", a.URL+"/v1/deployments", nil, &deps)
	if deps == nil {
		t.Fatal("deployments must be a list")
	}
	resp, body := call(t, "GET", a.URL+"/v1/deployment/0000", nil)
	requireStatus(t, resp, body, 404, "not found")
}
