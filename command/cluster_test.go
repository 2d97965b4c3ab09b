package command

import (
	"bytes"
	"strings"
	"testing"
)

func TestEvalStatusShowsFailuresAndPlacedAllocations(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/evaluations", `[{"ID":"`+evalID+`"}]`)
	f.json("GET /v1/evaluation/"+evalID, evalJSON("complete", `"Priority":50,"BlockedEval":"b1b2b3b4-0000",
		"FailedTGAllocs":{"web":{"NodesEvaluated":0}}`))
	f.json("GET /v1/evaluation/"+evalID+"/allocations", placedAlloc)
	res := runCLI(t, f, "", "eval", "status", "e1a2")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	wantLines(t, res.stdout,
		"ID                 = e1a2b3c4",
		"Status             = complete",
		"TriggeredBy        = job-register",
		"Job ID             = web",
		"Placement Failures = true",
		"Blocked Eval       = b1b2b3b4",
		"Placed Allocations",
		"a1b2c3d4",
		"Failed Placements",
		`Task Group "web" (failed to place 1 allocation):`,
		"  * No nodes were eligible for evaluation",
		`Evaluation "b1b2b3b4" waiting for additional capacity`,
	)
}

func TestEvalListFilters(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/evaluations", `[
		{"ID":"e1","JobID":"web","Status":"complete","TriggeredBy":"job-register","Priority":50,"CreateIndex":1},
		{"ID":"e2","JobID":"api","Status":"blocked","TriggeredBy":"queued-allocs","Priority":50,"CreateIndex":2}]`)
	res := runCLI(t, f, "", "eval", "list", "-status=blocked")
	if res.code != 0 || !strings.Contains(res.stdout, "e2") || strings.Contains(res.stdout, "e1 ") {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	wantLines(t, res.stdout, "ID  Priority  Triggered By   Job ID  Namespace  Node ID  Status   Placement Failures")
	if res := runCLI(t, f, "", "eval", "list", "-job=nope"); res.stdout != "No evaluations found\n" {
		t.Errorf("no match printed %q", res.stdout)
	}
}

func TestDeploymentStatus(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/deployments", `[{"ID":"`+deplID+`"}]`)
	f.json("GET /v1/deployment/"+deplID, `{"ID":"`+deplID+`","JobID":"web","JobVersion":2,"Status":"running",
		"StatusDescription":"Deployment is running","TaskGroups":{"web":{"DesiredTotal":3,"DesiredCanaries":1,
		"PlacedCanaries":["x"],"PlacedAllocs":1,"HealthyAllocs":0,"AutoRevert":true}}}`)
	res := runCLI(t, f, "", "deployment", "status", "d1e2")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	wantLines(t, res.stdout,
		"ID          = d1e2f3a4",
		"Job Version = 2",
		"Description = Deployment is running",
		"Deployed",
		"Task Group  Auto Revert  Promoted  Desired  Canaries  Placed  Healthy  Unhealthy  Progress Deadline",
		"web         true         false     3        1         1       0        0          N/A",
	)
}

func TestServerMembersMarksTheLeader(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/agent/members", `{"ServerName":"s1","Members":[
		{"Name":"s2.global","Addr":"10.0.0.2","Port":4648,"Status":"alive","Tags":{"port":"4647","region":"global","dc":"dc1","build":"0.1.0","raft_vsn":"3"}},
		{"Name":"s1.global","Addr":"10.0.0.1","Port":4648,"Status":"alive","Tags":{"port":"4647","region":"global","dc":"dc1","build":"0.1.0","raft_vsn":"3"}}]}`)
	f.json("GET /v1/status/leader", `"10.0.0.2:4647"`)
	res := runCLI(t, f, "", "server", "members")
	wantLines(t, res.stdout,
		"Name       Address   Port  Status  Leader  Raft Version  Build  Datacenter  Region",
		"s1.global  10.0.0.1  4648  alive   false   3             0.1.0  dc1         global",
		"s2.global  10.0.0.2  4648  alive   true    3             0.1.0  dc1         global",
	)
}

func TestOperatorRaftListPeers(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/operator/raft/configuration", `{"Index":9,"Servers":[
		{"ID":"id-1","Node":"s1.global","Address":"10.0.0.1:4647","Leader":true,"Voter":true,"RaftProtocol":"3"}]}`)
	res := runCLI(t, f, "", "operator", "raft", "list-peers", "-stale")
	wantLines(t, res.stdout,
		"Node       ID    Address        State   Voter  RaftProtocol",
		"s1.global  id-1  10.0.0.1:4647  leader  true   3",
	)
	if !f.requests("GET /v1/operator/raft/configuration")[0].query.Has("stale") {
		t.Error("-stale not sent")
	}
}

func TestSystemGC(t *testing.T) {
	f := newFakeAgent(t).json("PUT /v1/system/gc", ``)
	if res := runCLI(t, f, "", "system", "gc"); res.code != 0 || len(f.requests("PUT /v1/system/gc")) != 1 {
		t.Fatalf("exit %d %s", res.code, res.stderr)
	}
	f.on("PUT /v1/system/gc", reply{status: 500, body: "no leader"})
	if res := runCLI(t, f, "", "system", "gc"); res.code != 1 || !strings.Contains(res.stderr, "no leader") {
		t.Errorf("exit %d %s", res.code, res.stderr)
	}
}

func TestStatusFindsTheKindOfObject(t *testing.T) {
	f := newFakeAgent(t)
	for _, r := range []string{"GET /v1/jobs", "GET /v1/nodes", "GET /v1/evaluations", "GET /v1/deployments"} {
		f.json(r, `[]`)
	}
	f.json("GET /v1/allocations", `[{"ID":"`+allocID+`"}]`)
	f.json("GET /v1/allocation/"+allocID, allocJSON())
	res := runCLI(t, f, "", "status", "a1b2")
	if res.code != 0 || !strings.Contains(res.stdout, `Task "server" is "running"`) {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	f.json("GET /v1/nodes", `[{"ID":"a1b2ffff"}]`)
	res = runCLI(t, f, "", "status", "a1b2")
	if res.code != 1 || !strings.Contains(res.stderr, "node (1), allocation (1)") {
		t.Errorf("ambiguous: exit %d %q", res.code, res.stderr)
	}
	if res := runCLI(t, f, "", "status"); res.code != 0 || res.stdout != "No running jobs\n" {
		t.Errorf("no argument: exit %d %q", res.code, res.stdout)
	}
}

func TestDispatchUsageAndHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"job"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "job run") {
		t.Errorf("bare group: exit %d %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"job", "frobnicate"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), `Unknown command "job frobnicate"`) {
		t.Errorf("unknown subcommand: exit %d %q", code, errb.String())
	}
	out.Reset()
	if code := run([]string{"job", "run", "-help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "-check-index") {
		t.Errorf("-help: exit %d %q", code, out.String())
	}
	out.Reset()
	if code := run([]string{"help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "operator raft list-peers") {
		t.Errorf("help: exit %d %q", code, out.String())
	}
	errb.Reset()
	if code := run([]string{"job", "status", "-bogus"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "flag provided but not defined") {
		t.Errorf("bad flag: exit %d %q", code, errb.String())
	}
}

func TestAgentAddressComesFromTheEnvironment(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/jobs", `[]`)
	for _, env := range []string{"DROVER_ADDR", "NOMAD_ADDR"} {
		t.Run(env, func(t *testing.T) {
			var out, errb bytes.Buffer
			m := newMeta(&out, &errb)
			m.getenv = func(k string) string {
				if k == env {
					return f.srv.URL
				}
				return ""
			}
			if code, _ := runVerbMeta(m, []string{"job", "status"}); code != 0 || out.String() != "No running jobs\n" {
				t.Errorf("exit %d %q %q", code, out.String(), errb.String())
			}
		})
	}
}
