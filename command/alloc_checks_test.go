package command

import "testing"

func TestAllocStatusShowsServiceChecks(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/allocations", `[{"ID":"`+allocID+`"}]`)
	f.json("GET /v1/allocation/"+allocID, allocJSON())
	f.json("GET /v1/client/allocation/"+allocID+"/checks", `{
		"c2":{"ID":"c2","Check":"script","Group":"web","Mode":"healthiness","Output":"not ready\nyet","Service":"web","Task":"server","Status":"failure","StatusCode":2,"Timestamp":1},
		"c1":{"ID":"c1","Check":"alive","Group":"web","Mode":"readiness","Output":"HTTP GET http://127.0.0.1:25432/: 200 OK","Service":"web","Status":"success","StatusCode":200,"Timestamp":1}}`)
	res := runCLI(t, f, "", "alloc", "status", "a1b2")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	wantLines(t, res.stdout,
		"Service Checks",
		"Service  Task     Name    Mode         Status",
		"web      (group)  alive   readiness    success",
		"web      server   script  healthiness  failure",
	)
	res = runCLI(t, f, "", "alloc", "status", "-verbose", "a1b2")
	wantLines(t, res.stdout,
		"Service  Task     Name    Mode         Status   Output",
		"web      server   script  healthiness  failure  not ready yet",
	)
}
