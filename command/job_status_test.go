package command

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func jobInfo(f *fakeAgent) *fakeAgent {
	return f.json("GET /v1/job/web", fmt.Sprintf(`{"ID":"web","Name":"web","Type":"service","Priority":50,
		"Datacenters":["dc1"],"Namespace":"default","NodePool":"default","Status":"running","Stop":false,
		"Version":2,"SubmitTime":%d}`, nanosAgo(time.Hour)))
}

func nanosAgo(d time.Duration) int64 { return testNow.Add(-d).UnixNano() }

func TestJobStatusListsJobs(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/jobs", `[
		{"ID":"web","Type":"service","Priority":50,"Status":"running"},
		{"ID":"backup","Type":"batch","Priority":70,"Status":"pending","Periodic":true},
		{"ID":"old","Type":"service","Priority":50,"Status":"running","Stop":true}]`)
	res := runCLI(t, f, "", "job", "status")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	wantLines(t, res.stdout,
		"ID      Type            Priority  Status             Submit Date",
		"backup  batch/periodic  70        pending            N/A",
		"old     service         50        running (stopped)  N/A",
		"web     service         50        running            N/A",
	)

	f.json("GET /v1/jobs", `[]`)
	if res := runCLI(t, f, "", "job", "status"); res.stdout != "No running jobs\n" {
		t.Errorf("empty list printed %q", res.stdout)
	}
}

func TestJobStatusShowsSummaryDeploymentAndAllocations(t *testing.T) {
	f := jobInfo(newFakeAgent(t))
	f.json("GET /v1/jobs", `[{"ID":"web"}]`)
	f.json("GET /v1/job/web/summary", `{"JobID":"web","Summary":{"web":{"Running":2,"Queued":1,"Lost":1}}}`)
	f.json("GET /v1/job/web/allocations", fmt.Sprintf(`[
		{"ID":"%s","NodeID":"%s","TaskGroup":"web","JobVersion":2,"DesiredStatus":"run","ClientStatus":"running","CreateIndex":20,"CreateTime":%d,"ModifyTime":%d},
		{"ID":"b2b2b2b2-0000","NodeID":"%s","TaskGroup":"web","JobVersion":1,"DesiredStatus":"stop","ClientStatus":"complete","CreateIndex":5,"CreateTime":%d,"ModifyTime":%d}]`,
		allocID, nodeID, nanosAgo(65*time.Second), nanosAgo(58*time.Second),
		nodeID, nanosAgo(3*time.Hour+12*time.Minute), nanosAgo(2*time.Hour)))
	f.json("GET /v1/job/web/deployment", `{"ID":"`+deplID+`","JobID":"web","JobVersion":2,"Status":"successful",
		"StatusDescription":"Deployment completed successfully","TaskGroups":{"web":{"DesiredTotal":2,"PlacedAllocs":2,"HealthyAllocs":2}}}`)
	f.json("GET /v1/job/web/evaluations", `[
		{"ID":"e2","Status":"blocked","CreateIndex":30,"FailedTGAllocs":{"web":{"NodesEvaluated":1,"NodesExhausted":1,"DimensionExhausted":{"memory":1}}}},
		{"ID":"e1","Status":"complete","CreateIndex":10}]`)

	res := runCLI(t, f, "", "job", "status", "web")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	wantLines(t, res.stdout,
		"ID            = web",
		"Submit Date   = ",
		"Type          = service",
		"Datacenters   = dc1",
		"Status        = running",
		"Periodic      = false",
		"Summary",
		"Task Group  Queued  Starting  Running  Failed  Complete  Lost  Unknown",
		"web         1       0         2        0       0         1     0",
		"Placement Failure",
		`Task Group "web" (failed to place 1 allocation):`,
		`  * Dimension "memory" exhausted on 1 node`,
		"Latest Deployment",
		"ID          = d1e2f3a4",
		"Status      = successful",
		"Deployed",
		"Allocations",
		"ID        Node ID   Task Group  Version  Desired  Status    Created    Modified",
		"a1b2c3d4  f1e2d3c4  web         2        run      running   1m5s ago   58s ago",
		"b2b2b2b2  f1e2d3c4  web         1        stop     complete  3h12m ago  2h ago",
	)
}

func TestJobStatusWithAnAmbiguousPrefixListsTheMatches(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/jobs", `[{"ID":"web-a","Type":"service","Priority":50,"Status":"running"},
		{"ID":"web-b","Type":"service","Priority":50,"Status":"dead"}]`)
	res := runCLI(t, f, "", "job", "status", "web")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	wantLines(t, res.stdout, "Prefix matched multiple jobs", "web-a", "web-b")
	if got := f.requests("GET /v1/jobs")[0].query.Get("prefix"); got != "web" {
		t.Errorf("prefix %q", got)
	}

	f.json("GET /v1/jobs", `[]`)
	res = runCLI(t, f, "", "job", "status", "nope")
	if res.code != 1 || !strings.Contains(res.stderr, `No job(s) with prefix or ID "nope" found`) {
		t.Errorf("exit %d: %s", res.code, res.stderr)
	}
}

func TestJobStatusJSON(t *testing.T) {
	f := jobInfo(newFakeAgent(t))
	f.json("GET /v1/jobs", `[{"ID":"web"}]`)
	f.json("GET /v1/job/web/summary", `{"JobID":"web","Summary":{}}`)
	f.json("GET /v1/job/web/allocations", `[]`)
	f.json("GET /v1/job/web/deployment", `null`)
	res := runCLI(t, f, "", "job", "status", "-json", "web")
	if err := jsonSubset(res.stdout, `{"Job":{"ID":"web","Version":2},"Summary":{"JobID":"web"},"LatestDeployment":null}`); err != nil {
		t.Error(err)
	}
}

func TestRelativeTimesUseTwoUnits(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                  "0s ago",
		65 * time.Second:                   "1m5s ago",
		3*time.Hour + 12*time.Minute + 5e9: "3h12m ago",
		time.Hour + 5*time.Second:          "1h ago",
		50*time.Hour + 30*time.Minute:      "2d2h ago",
		-25 * time.Second:                  "in 25s",
	} {
		if got := relTime(testNow.Add(-d), testNow); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
}
