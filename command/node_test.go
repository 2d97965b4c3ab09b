package command

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const nodeJSON = `{"ID":"` + nodeID + `","Name":"client-1","Datacenter":"dc1","NodePool":"default","Status":"ready",
	"SchedulingEligibility":"eligible","HTTPAddr":"127.0.0.1:4646",
	"Drivers":{"mock_driver":{"Detected":true,"Healthy":true},"docker":{"Detected":false}},
	"NodeResources":{"Cpu":{"CpuShares":4000},"Memory":{"MemoryMB":8192},"Disk":{"DiskMB":51200}},
	"ReservedResources":{"Cpu":{"CpuShares":0},"Memory":{"MemoryMB":0}},
	"Events":[{"Message":"Node registered","Subsystem":"Cluster","Timestamp":"2024-05-01T11:50:00Z"}]}`

func nodeAllocs(clientStatus, desired string) string {
	return fmt.Sprintf(`[{"ID":"%s","NodeID":"%s","JobID":"web","TaskGroup":"web","DesiredStatus":"%s","ClientStatus":"%s",
		"CreateIndex":20,"CreateTime":%d,"ModifyTime":%d,"Job":{"ID":"web","Version":1},
		"AllocatedResources":{"Tasks":{"server":{"Cpu":{"CpuShares":100},"Memory":{"MemoryMB":64}}},"Shared":{"DiskMB":300}}}]`,
		allocID, nodeID, desired, clientStatus, nanosAgo(time.Minute), nanosAgo(time.Minute))
}

func TestNodeStatusListsNodes(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/nodes", `[{"ID":"`+nodeID+`","Name":"client-1","Datacenter":"dc1","NodePool":"default",
		"Drain":false,"SchedulingEligibility":"eligible","Status":"ready"}]`)
	res := runCLI(t, f, "", "node", "status")
	wantLines(t, res.stdout,
		"ID        Node Pool  DC   Name      Class   Drain  Eligibility  Status",
		"f1e2d3c4  default    dc1  client-1  <none>  false  eligible     ready",
	)
}

func TestNodeStatusShowsOneNode(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/nodes", `[{"ID":"`+nodeID+`"}]`)
	f.json("GET /v1/node/"+nodeID, nodeJSON)
	f.json("GET /v1/node/"+nodeID+"/allocations", nodeAllocs("running", "stop"))
	res := runCLI(t, f, "", "node", "status", "f1e2")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	wantLines(t, res.stdout,
		"ID          = f1e2d3c4",
		"Name        = client-1",
		"Drain       = false",
		"Drivers     = mock_driver",
		"Node Events",
		"10m ago  Cluster    Node registered",
		"Allocated Resources",
		"CPU           Memory          Disk",
		// Stopping but still running: it still holds its resources.
		"100/4000 MHz  64 MiB/8.0 GiB  300 MiB/50.0 GiB",
		"Allocations",
		"a1b2c3d4  f1e2d3c4  web         1        stop     running  1m ago   1m ago",
	)
}

func TestNodeDrainEnableMonitorsUntilAllocationsStop(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/nodes", `[{"ID":"`+nodeID+`"}]`)
	f.json("PUT /v1/node/"+nodeID+"/drain", `{"NodeModifyIndex":30}`)
	draining := strings.Replace(nodeJSON, `"Status":"ready"`, `"Status":"ready","DrainStrategy":{"Deadline":3600000000000}`, 1)
	drained := strings.Replace(nodeJSON, `"Status":"ready"`, `"Status":"ready","LastDrain":{"Status":"complete"}`, 1)
	f.on("GET /v1/node/"+nodeID, reply{body: draining, index: 30}, reply{body: drained, index: 40})
	f.on("GET /v1/node/"+nodeID+"/allocations",
		reply{body: nodeAllocs("running", "run"), index: 30},
		reply{body: nodeAllocs("running", "stop"), index: 35},
		reply{body: nodeAllocs("complete", "stop"), index: 40})

	res := runCLI(t, f, "", "node", "drain", "-enable", "-deadline=30m", "-yes", nodeID)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stdout, fmt.Sprintf("Node %q drain strategy set", nodeID), `Monitoring node "f1e2d3c4"`)
	for _, want := range []string{`Alloc "a1b2c3d4" draining`, `Alloc "a1b2c3d4" status running -> complete`,
		`Node "f1e2d3c4" drain complete`, `All allocations on node "f1e2d3c4" have stopped`} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("output lacks %q\n%s", want, res.stdout)
		}
	}
	if err := jsonSubset(f.requests("PUT /v1/node/" + nodeID + "/drain")[0].body,
		`{"NodeID":"`+nodeID+`","DrainSpec":{"Deadline":1800000000000,"IgnoreSystemJobs":false},"MarkEligible":false}`); err != nil {
		t.Error(err)
	}
}

func TestNodeDrainFlags(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/nodes", `[{"ID":"`+nodeID+`"}]`)
	f.json("PUT /v1/node/"+nodeID+"/drain", `{}`)

	res := runCLI(t, f, "", "node", "drain", "-disable", nodeID)
	if res.code != 0 || !strings.Contains(res.stdout, "drain strategy unset") {
		t.Fatalf("disable: exit %d %s", res.code, res.stderr)
	}
	if err := jsonSubset(f.requests("PUT /v1/node/" + nodeID + "/drain")[0].body, `{"DrainSpec":null,"MarkEligible":true}`); err != nil {
		t.Error(err)
	}
	runCLI(t, f, "", "node", "drain", "-enable", "-force", "-detach", nodeID)
	if err := jsonSubset(f.requests("PUT /v1/node/" + nodeID + "/drain")[1].body, `{"DrainSpec":{"Deadline":-1}}`); err != nil {
		t.Error(err)
	}
	for _, args := range [][]string{
		{"node", "drain", nodeID},
		{"node", "drain", "-enable", "-disable", nodeID},
		{"node", "drain", "-enable", "-force", "-deadline=1m", nodeID},
	} {
		if res := runCLI(t, f, "", args...); res.code != 1 {
			t.Errorf("%v: exit %d, want 1", args, res.code)
		}
	}
	// A prefix asks first, and "no" changes nothing.
	n := len(f.requests("PUT /v1/node/" + nodeID + "/drain"))
	res = runCLI(t, f, "", "node", "drain", "-enable", "f1e2")
	if res.code != 0 || len(f.requests("PUT /v1/node/"+nodeID+"/drain")) != n {
		t.Errorf("unconfirmed drain: exit %d, %s", res.code, res.stdout)
	}
}

func TestNodeEligibility(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/nodes", `[{"ID":"`+nodeID+`"}]`)
	f.json("PUT /v1/node/"+nodeID+"/eligibility", `{}`)
	res := runCLI(t, f, "", "node", "eligibility", "-disable", "f1e2")
	if res.code != 0 || !strings.Contains(res.stdout, "ineligible for scheduling") {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if err := jsonSubset(f.requests("PUT /v1/node/" + nodeID + "/eligibility")[0].body, `{"Eligibility":"ineligible"}`); err != nil {
		t.Error(err)
	}
	if res := runCLI(t, f, "", "node", "eligibility", nodeID); res.code != 1 {
		t.Errorf("no -enable/-disable: exit %d", res.code)
	}
}
