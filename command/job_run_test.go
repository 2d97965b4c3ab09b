package command

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	evalID  = "e1a2b3c4-0000-4000-8000-000000000001"
	allocID = "a1b2c3d4-0000-4000-8000-000000000001"
	nodeID  = "f1e2d3c4-0000-4000-8000-000000000001"
	deplID  = "d1e2f3a4-0000-4000-8000-000000000001"
)

const webJob = `
variable "count" {
  type    = number
  default = 1
}

job "web" {
  group "web" {
    count = var.count
    network {
      port "http" {}
    }
    task "server" {
      driver = "mock_driver"
      config {
        run_for = "1h"
      }
    }
  }
}
`

func writeJob(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "web.hcl")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func evalJSON(status string, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return `{"ID":"` + evalID + `","Namespace":"default","Type":"service","TriggeredBy":"job-register","JobID":"web",
		"JobModifyIndex":9,"Status":"` + status + `","CreateIndex":10,"ModifyIndex":12` + extra + `}`
}

const placedAlloc = `[{"ID":"` + allocID + `","NodeID":"` + nodeID + `","TaskGroup":"web","CreateIndex":11,
	"DesiredStatus":"run","ClientStatus":"pending"}]`

// registered answers a register of job "web" with evalID.
func registered(f *fakeAgent) *fakeAgent {
	return f.json("PUT /v1/jobs", `{"EvalID":"`+evalID+`","EvalCreateIndex":10,"JobModifyIndex":9}`)
}

func TestJobRunSubmitsAndMonitorsTheEvaluationWithBlockingQueries(t *testing.T) {
	f := registered(newFakeAgent(t))
	f.on("GET /v1/evaluation/"+evalID,
		reply{body: evalJSON("pending", ""), index: 10},
		reply{body: evalJSON("complete", ""), index: 12})
	f.on("GET /v1/evaluation/"+evalID+"/allocations", reply{body: `[]`, index: 10}, reply{body: placedAlloc, index: 12})
	f.json("GET /v1/job/web/deployment", `null`)

	res := runCLI(t, f, "", "job", "run", "-var", "count=3", writeJob(t, webJob))
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stdout,
		`==> 2024-05-01T12:00:00Z: Monitoring evaluation "e1a2b3c4"`,
		`    Evaluation triggered by job "web"`,
		`    Allocation "a1b2c3d4" created: node "f1e2d3c4", group "web"`,
		`    Evaluation status changed: "pending" -> "complete"`,
		`==> 2024-05-01T12:00:00Z: Evaluation "e1a2b3c4" finished with status "complete"`,
	)

	var body struct {
		Job struct {
			ID         string
			TaskGroups []struct{ Count int }
		}
	}
	if err := json.Unmarshal([]byte(f.requests("PUT /v1/jobs")[0].body), &body); err != nil {
		t.Fatal(err)
	}
	if body.Job.ID != "web" || body.Job.TaskGroups[0].Count != 3 {
		t.Errorf("submitted %+v, want job web with the -var count 3", body.Job)
	}

	// The second read must block on the index of the first answer, not
	// poll: that is what makes monitoring cheap for the servers.
	reads := f.requests("GET /v1/evaluation/" + evalID)
	if len(reads) != 2 {
		t.Fatalf("%d evaluation reads, want 2", len(reads))
	}
	if reads[0].query.Get("index") != "" || reads[1].query.Get("index") != "10" || reads[1].query.Get("wait") == "" {
		t.Errorf("blocking parameters: first %v, second %v", reads[0].query, reads[1].query)
	}
}

func TestJobRunExplainsPlacementFailuresAndExitsTwo(t *testing.T) {
	f := registered(newFakeAgent(t))
	failed := `"BlockedEval":"b1b2b3b4-0000-4000-8000-000000000001","FailedTGAllocs":{"web":{"NodesEvaluated":5,
		"NodesFiltered":3,"ConstraintFiltered":{"${attr.kernel.name} = windows":3},"NodesExhausted":2,
		"DimensionExhausted":{"memory":2},"CoalescedFailures":2}}`
	f.on("GET /v1/evaluation/"+evalID, reply{body: evalJSON("complete", failed), index: 12})
	f.json("GET /v1/evaluation/"+evalID+"/allocations", `[]`)

	res := runCLI(t, f, "", "job", "run", writeJob(t, webJob))
	if res.code != 2 {
		t.Fatalf("exit %d, want 2\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stdout,
		`Evaluation "e1a2b3c4" finished with status "complete" but failed to place all allocations:`,
		`    Task Group "web" (failed to place 3 allocations):`,
		`      * Constraint "${attr.kernel.name} = windows": 3 nodes excluded by filter`,
		`      * Resources exhausted on 2 nodes`,
		`      * Dimension "memory" exhausted on 2 nodes`,
		`    Evaluation "b1b2b3b4" waiting for additional capacity to place remainder`,
	)
	if f.requests("GET /v1/job/web/deployment") != nil {
		t.Error("looked for a deployment although nothing was placed")
	}
}

func TestJobRunFollowsTheDeploymentToTheEnd(t *testing.T) {
	f := registered(newFakeAgent(t))
	f.on("GET /v1/evaluation/"+evalID, reply{body: evalJSON("complete", `"DeploymentID":"`+deplID+`"`), index: 12})
	f.json("GET /v1/evaluation/"+evalID+"/allocations", placedAlloc)
	dep := func(status, desc string, healthy int) string {
		return `{"ID":"` + deplID + `","JobID":"web","Status":"` + status + `","StatusDescription":"` + desc + `",
			"TaskGroups":{"web":{"DesiredTotal":1,"PlacedAllocs":1,"HealthyAllocs":` + string(rune('0'+healthy)) + `}}}`
	}
	f.on("GET /v1/deployment/"+deplID,
		reply{body: dep("running", "Deployment is running", 0), index: 13},
		reply{body: dep("successful", "Deployment completed successfully", 1), index: 15})

	res := runCLI(t, f, "", "job", "run", writeJob(t, webJob))
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stdout,
		`Evaluation within deployment: "d1e2f3a4"`,
		`==> 2024-05-01T12:00:00Z: Monitoring deployment "d1e2f3a4"`,
		`    Deployment "d1e2f3a4" running: Deployment is running`,
		`    Task Group  Desired  Placed  Healthy  Unhealthy  Progress Deadline`,
		`    web         1        1       0        0          N/A`,
		`    Deployment "d1e2f3a4" successful: Deployment completed successfully`,
		`    web         1        1       1        0          N/A`,
		`Deployment "d1e2f3a4" finished with status "successful"`,
	)
	if got := f.requests("GET /v1/deployment/" + deplID)[1].query.Get("index"); got != "13" {
		t.Errorf("second deployment read index %q, want 13", got)
	}
}

func TestJobRunDetachPrintsTheEvaluationAndReturns(t *testing.T) {
	f := registered(newFakeAgent(t))
	res := runCLI(t, f, "", "job", "run", "-detach", writeJob(t, webJob))
	if res.code != 0 || !strings.Contains(res.stdout, "Evaluation ID: "+evalID) {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if f.requests("GET /v1/evaluation/"+evalID) != nil {
		t.Error("-detach still monitored")
	}
}

func TestJobRunCheckIndexSendsTheIndexAndReportsAConflict(t *testing.T) {
	f := newFakeAgent(t)
	f.on("PUT /v1/jobs", reply{status: 409, body: `Enforcing job modify index 5: job exists with conflicting job modify index: 7`})
	res := runCLI(t, f, "", "job", "run", "-check-index", "5", writeJob(t, webJob))
	if res.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stderr, "conflicting job modify index: 7", "Job not updated")
	if err := jsonSubset(f.requests("PUT /v1/jobs")[0].body, `{"EnforceIndex":true,"JobModifyIndex":5}`); err != nil {
		t.Error(err)
	}

	// -check-index 0 is meaningful: the job must not exist yet.
	registered(f)
	f.json("GET /v1/evaluation/"+evalID, evalJSON("complete", ""))
	f.json("GET /v1/evaluation/"+evalID+"/allocations", `[]`)
	f.json("GET /v1/job/web/deployment", `null`)
	if res := runCLI(t, f, "", "job", "run", "-check-index=0", writeJob(t, webJob)); res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	reqs := f.requests("PUT /v1/jobs")
	if err := jsonSubset(reqs[len(reqs)-1].body, `{"EnforceIndex":true}`); err != nil {
		t.Error(err)
	}
}

func TestJobRunReportsParseErrorsWithoutContactingTheAgent(t *testing.T) {
	f := newFakeAgent(t)
	res := runCLI(t, f, "", "job", "run", writeJob(t, `job "web" { group "web" { count = "many" } }`))
	if res.code != 1 || !strings.Contains(res.stderr, "Error parsing job file") {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if len(f.reqs) != 0 {
		t.Errorf("a broken job file was sent: %v", f.reqs)
	}
}

func TestJobRunOutputPrintsTheAPIJSON(t *testing.T) {
	res := runCLI(t, nil, "", "job", "run", "-output", writeJob(t, webJob))
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	if err := jsonSubset(res.stdout, `{"Job":{"ID":"web"}}`); err != nil {
		t.Error(err)
	}
}

func TestJobRunReadsStandardInput(t *testing.T) {
	res := runCLI(t, nil, webJob, "job", "run", "-output", "-")
	if res.code != 0 || !strings.Contains(res.stdout, `"ID": "web"`) {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

func TestJobRunSaysItIsStillWaitingDuringLongWaits(t *testing.T) {
	f := registered(newFakeAgent(t))
	f.on("GET /v1/evaluation/"+evalID,
		reply{body: evalJSON("pending", ""), index: 10},
		reply{body: evalJSON("pending", ""), index: 10},
		reply{body: evalJSON("complete", ""), index: 12})
	f.json("GET /v1/evaluation/"+evalID+"/allocations", `[]`)
	f.json("GET /v1/job/web/deployment", `null`)

	// Each read of the clock moves it on, as a blocking query that
	// returned empty-handed would have.
	var out, errb bytes.Buffer
	m := newMeta(&out, &errb)
	m.getenv = func(string) string { return "" }
	now := testNow
	m.now = func() time.Time { now = now.Add(20 * time.Second); return now }
	code := jobRun(m, []string{"-address=" + f.srv.URL, writeJob(t, webJob)})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	wantLines(t, out.String(), `Still waiting for evaluation "e1a2b3c4" (status "pending")`, `finished with status "complete"`)
}
