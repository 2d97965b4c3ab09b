package command

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"
)

func allocJSON() string {
	ev := func(typ string, ago time.Duration, extra string) string {
		return fmt.Sprintf(`{"Type":%q,"Time":%d%s}`, typ, nanosAgo(ago), extra)
	}
	return fmt.Sprintf(`{"ID":"%s","EvalID":"%s","Name":"web.web[0]","NodeID":"%s","NodeName":"client-1","JobID":"web",
		"TaskGroup":"web","DesiredStatus":"run","ClientStatus":"running","ClientDescription":"Tasks are running",
		"CreateTime":%d,"ModifyTime":%d,"FollowupEvalID":"","NextAllocation":"",
		"RescheduleTracker":{"Events":[{"PrevAllocID":"x"}]},
		"Job":{"ID":"web","Version":3,"TaskGroups":[{"Name":"web","ReschedulePolicy":{"Attempts":3,"Unlimited":false},"Tasks":[{"Name":"server"}]}]},
		"AllocatedResources":{"Tasks":{"server":{"Cpu":{"CpuShares":100},"Memory":{"MemoryMB":64}}},
		  "Shared":{"DiskMB":300,"Ports":[{"Label":"http","Value":25432,"HostIP":"127.0.0.1"}]}},
		"AllocStates":[{"Field":"ClientStatus","Value":"unknown","Time":"2024-05-01T11:55:00Z"}],
		"TaskStates":{"server":{"State":"running","Restarts":1,"StartedAt":"2024-05-01T11:58:00Z",
		  "Events":[%s,%s,%s,%s]}}}`,
		allocID, evalID, nodeID, nanosAgo(5*time.Minute), nanosAgo(2*time.Minute),
		ev("Received", 5*time.Minute, ""), ev("Terminated", 3*time.Minute, `,"ExitCode":137,"Signal":9`),
		ev("Restarting", 3*time.Minute-time.Second, `,"RestartReason":"Restart within policy","StartDelay":15000000000`),
		ev("Started", 2*time.Minute, `,"DisplayMessage":"Task started by client"`))
}

func TestAllocStatusShowsTasksEventsAndHistory(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/allocations", `[{"ID":"`+allocID+`"}]`)
	f.json("GET /v1/allocation/"+allocID, allocJSON())
	res := runCLI(t, f, "", "alloc", "status", "a1b2")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	wantLines(t, res.stdout,
		"ID                  = a1b2c3d4",
		"Name                = web.web[0]",
		"Job Version         = 3",
		"Client Status       = running",
		"Created             = 5m ago",
		"Reschedule Attempts = 1/3",
		"Allocation State History",
		"ClientStatus  unknown",
		`Task "server" is "running"`,
		"CPU      Memory  Disk     Addresses",
		"100 MHz  64 MiB  300 MiB  http: 127.0.0.1:25432",
		"Total Restarts = 1",
		"Recent Events:",
		"Started     Task started by client",
		"Restarting  Restart within policy - Restarting in 15s",
		"Terminated  Exit Code: 137, Signal: 9",
		"Received    Task received by client",
	)
}

func logFrames(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		fmt.Fprintf(&b, `{"Data":%q,"File":"alloc/logs/server.stdout.0"}`, base64.StdEncoding.EncodeToString([]byte(c)))
	}
	return b.String()
}

func TestAllocLogs(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/allocations", `[{"ID":"`+allocID+`"}]`)
	f.json("GET /v1/allocation/"+allocID, allocJSON())
	f.json("GET /v1/client/fs/logs/"+allocID, logFrames("one\ntwo\n", "three\nfour\n"))

	res := runCLI(t, f, "", "alloc", "logs", "a1b2")
	if res.code != 0 || res.stdout != "one\ntwo\nthree\nfour\n" {
		t.Fatalf("exit %d stdout %q stderr %q", res.code, res.stdout, res.stderr)
	}
	q := f.requests("GET /v1/client/fs/logs/" + allocID)[0].query
	if q.Get("task") != "server" || q.Get("type") != "stdout" || q.Get("origin") != "start" {
		t.Errorf("query %v", q)
	}

	res = runCLI(t, f, "", "alloc", "logs", "-stderr", "-tail", "-n", "2", allocID, "server")
	if res.code != 0 || res.stdout != "three\nfour\n" {
		t.Fatalf("tail: exit %d stdout %q stderr %q", res.code, res.stdout, res.stderr)
	}
	q = f.requests("GET /v1/client/fs/logs/" + allocID)[1].query
	if q.Get("type") != "stderr" || q.Get("origin") != "end" || q.Get("offset") == "0" {
		t.Errorf("tail query %v", q)
	}

	res = runCLI(t, f, "", "alloc", "logs", "-f", "-tail", "-n", "1", allocID)
	if res.code != 0 || res.stdout != "four\n" {
		t.Fatalf("follow tail: exit %d stdout %q stderr %q", res.code, res.stdout, res.stderr)
	}

	if res := runCLI(t, f, "", "alloc", "logs", allocID, "nope"); res.code != 1 || !strings.Contains(res.stderr, `no task "nope"`) {
		t.Errorf("unknown task: exit %d %q", res.code, res.stderr)
	}
	if res := runCLI(t, f, "", "alloc", "logs", "-n", "3", allocID); res.code != 1 {
		t.Errorf("-n without -tail: exit %d", res.code)
	}
}

func TestLastLines(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc\n"},
		{"a\nb\nc", 2, "b\nc"},
		{"a\nb\n", 5, "a\nb\n"},
		{"a\nb\n", 0, ""},
		{"", 3, ""},
	} {
		if got := string(lastLines([]byte(tt.in), tt.n)); got != tt.want {
			t.Errorf("lastLines(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestAllocStopMonitorsTheReplacement(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/allocations", `[{"ID":"`+allocID+`"}]`)
	f.json("POST /v1/allocation/"+allocID+"/stop", `{"EvalID":"`+evalID+`","Index":40}`)
	f.json("GET /v1/evaluation/"+evalID, `{"ID":"`+evalID+`","Type":"service","JobID":"web","Status":"complete","CreateIndex":40}`)
	f.json("GET /v1/evaluation/"+evalID+"/allocations", `[{"ID":"c1c1c1c1-0000","NodeID":"`+nodeID+`","TaskGroup":"web","CreateIndex":41}]`)
	res := runCLI(t, f, "", "alloc", "stop", "a1b2")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stdout, `Allocation "c1c1c1c1" created: node "f1e2d3c4", group "web"`, `finished with status "complete"`)
}

func TestAllocPrefixMatchingSeveral(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/allocations", `[{"ID":"a1b2c3d4-1","TaskGroup":"web"},{"ID":"a1b2c3d5-2","TaskGroup":"web"}]`)
	res := runCLI(t, f, "", "alloc", "status", "a1b2")
	if res.code != 1 || !strings.Contains(res.stderr, "Prefix matched multiple allocations") {
		t.Errorf("exit %d %q", res.code, res.stderr)
	}
}
