package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/command/agent/agenttest"
)

const dispatchedID = "process/dispatch-1714564800-0a1b2c3d"

// parameterizedParent answers the job lookup with the parent and one of
// its children, whose ID the parent's ID is a prefix of.
func parameterizedParent(f *fakeAgent) *fakeAgent {
	return f.json("GET /v1/jobs", `[{"ID":"process","Type":"batch","ParameterizedJob":true,"Status":"running"},
		{"ID":"`+dispatchedID+`","ParentID":"process","Type":"batch","Status":"pending"}]`)
}

func dispatchedEval(status string) string {
	return `{"ID":"` + evalID + `","Namespace":"default","Type":"batch","TriggeredBy":"job-register","JobID":"` + dispatchedID + `",
		"Status":"` + status + `","CreateIndex":20,"ModifyIndex":22}`
}

func dispatchBody(t *testing.T, f *fakeAgent) api.JobDispatchRequest {
	t.Helper()
	reqs := f.requests("PUT /v1/job/process/dispatch")
	if len(reqs) != 1 {
		t.Fatalf("%d dispatch requests, want 1", len(reqs))
	}
	var body api.JobDispatchRequest
	if err := json.Unmarshal([]byte(reqs[0].body), &body); err != nil {
		t.Fatalf("dispatch body %s: %v", reqs[0].body, err)
	}
	return body
}

func TestJobDispatchSendsMetaAndStdinPayloadThenMonitors(t *testing.T) {
	f := parameterizedParent(newFakeAgent(t))
	f.json("PUT /v1/job/process/dispatch", `{"DispatchedJobID":"`+dispatchedID+`","EvalID":"`+evalID+`","EvalCreateIndex":20,"JobCreateIndex":20,"Index":20}`)
	f.on("GET /v1/evaluation/"+evalID, reply{body: dispatchedEval("pending"), index: 20}, reply{body: dispatchedEval("complete"), index: 22})
	placed := `[{"ID":"` + allocID + `","NodeID":"` + nodeID + `","TaskGroup":"process","CreateIndex":21,"DesiredStatus":"run","ClientStatus":"pending"}]`
	f.on("GET /v1/evaluation/"+evalID+"/allocations", reply{body: `[]`, index: 20}, reply{body: placed, index: 22})

	res := runCLI(t, f, "{\"rows\": 3}\n", "job", "dispatch", "-meta", "input=report.csv", "-meta", "profile=fast=x",
		"-idempotency-token", "once", "proc", "-")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stdout,
		"Dispatched Job ID = "+dispatchedID,
		"Evaluation ID     = e1a2b3c4",
		"",
		`==> 2024-05-01T12:00:00Z: Monitoring evaluation "e1a2b3c4"`,
		`    Evaluation triggered by job "`+dispatchedID+`"`,
		`    Allocation "a1b2c3d4" created: node "f1e2d3c4", group "process"`,
		`==> 2024-05-01T12:00:00Z: Evaluation "e1a2b3c4" finished with status "complete"`,
	)
	body := dispatchBody(t, f)
	if body.JobID != "process" || string(body.Payload) != "{\"rows\": 3}\n" || body.IdempotencyToken != "once" ||
		body.Meta["input"] != "report.csv" || body.Meta["profile"] != "fast=x" || len(body.Meta) != 2 {
		t.Fatalf("dispatch body %+v", body)
	}
	// The payload is base64 on the wire, as in Nomad's JSON.
	raw := f.requests("PUT /v1/job/process/dispatch")[0].body
	if !strings.Contains(raw, `"Payload":"eyJyb3dzIjogM30K"`) {
		t.Fatalf("payload not base64 in %s", raw)
	}
}

func TestJobDispatchDetachReadsThePayloadFromAFile(t *testing.T) {
	f := parameterizedParent(newFakeAgent(t))
	f.json("PUT /v1/job/process/dispatch", `{"DispatchedJobID":"`+dispatchedID+`","EvalID":"`+evalID+`","EvalCreateIndex":20,"JobCreateIndex":20,"Index":20}`)
	path := filepath.Join(t.TempDir(), "input.json")
	if err := os.WriteFile(path, []byte("from a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, f, "", "job", "dispatch", "-detach", "-verbose", "-priority", "70", "-id-prefix-template", "nightly", "process", path)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if want := "Dispatched Job ID = " + dispatchedID + "\nEvaluation ID     = " + evalID + "\n"; res.stdout != want {
		t.Fatalf("output %q, want %q", res.stdout, want)
	}
	if body := dispatchBody(t, f); string(body.Payload) != "from a file" || body.Priority != 70 || body.IdPrefixTemplate != "nightly" {
		t.Fatalf("dispatch body %+v", body)
	}
	if n := len(f.requests("GET /v1/evaluation/" + evalID)); n != 0 {
		t.Fatalf("-detach monitored the evaluation (%d reads)", n)
	}
}

func TestJobDispatchAnsweredByAnEarlierInstanceMonitorsNothing(t *testing.T) {
	f := parameterizedParent(newFakeAgent(t))
	f.json("PUT /v1/job/process/dispatch", `{"DispatchedJobID":"`+dispatchedID+`","EvalID":"","JobCreateIndex":20,"Index":25}`)
	res := runCLI(t, f, "", "job", "dispatch", "-idempotency-token", "once", "process")
	if res.code != 0 || res.stdout != "Dispatched Job ID = "+dispatchedID+"\n" {
		t.Fatalf("exit %d, output %q", res.code, res.stdout)
	}
}

func TestJobDispatchErrors(t *testing.T) {
	t.Run("a malformed -meta is a usage error", func(t *testing.T) {
		res := runCLI(t, parameterizedParent(newFakeAgent(t)), "", "job", "dispatch", "-meta", "input", "process")
		if res.code != 1 || !strings.Contains(res.stderr, `Error parsing meta value: -meta "input" is not of the form <key>=<value>`) {
			t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
		}
	})
	t.Run("no job is a usage error", func(t *testing.T) {
		res := runCLI(t, newFakeAgent(t), "", "job", "dispatch")
		if res.code != 1 || !strings.Contains(res.stderr, "Usage: drover job dispatch") {
			t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
		}
	})
	t.Run("a missing payload file", func(t *testing.T) {
		res := runCLI(t, parameterizedParent(newFakeAgent(t)), "", "job", "dispatch", "process", filepath.Join(t.TempDir(), "nope"))
		if res.code != 1 || !strings.Contains(res.stderr, "Error reading input data") {
			t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
		}
	})
	t.Run("a prefix of no parameterized job", func(t *testing.T) {
		f := newFakeAgent(t).json("GET /v1/jobs", `[{"ID":"web","Type":"service"}]`)
		res := runCLI(t, f, "", "job", "dispatch", "we")
		if res.code != 1 || !strings.Contains(res.stderr, `No parameterized job(s) with prefix or ID "we" found`) {
			t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
		}
	})
	t.Run("the server's refusal is shown", func(t *testing.T) {
		f := parameterizedParent(newFakeAgent(t))
		f.on("PUT /v1/job/process/dispatch", reply{status: 400, body: `bad request: dispatching job "process": required meta keys ["input"] are missing`})
		res := runCLI(t, f, "", "job", "dispatch", "process")
		if res.code != 1 || !strings.Contains(res.stderr, `Failed to dispatch job: bad request: dispatching job "process": required meta keys ["input"] are missing`) {
			t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
		}
	})
}

const dispatchJobFile = `
job "process" {
  type = "batch"
  parameterized {
    payload       = "required"
    meta_required = ["input"]
  }
  group "process" {
    task "work" {
      driver = "mock_driver"
      dispatch_payload {
        file = "input.json"
      }
      config {
        run_for = "10ms"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`

// TestCLIDispatchAgainstADevAgent registers a parameterized job and
// dispatches it with the CLI on a real agent, following the evaluation to
// its end as "job run" does.
func TestCLIDispatchAgainstADevAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real agent")
	}
	skipWithoutAgent(t, nil)
	ta := agenttest.New(t, nil)
	addr := "-address=" + ta.URL
	if res := runCLI(t, nil, "", "job", "run", addr, writeJob(t, dispatchJobFile)); res.code != 0 || !strings.Contains(res.stdout, "Job registration successful") {
		t.Fatalf("job run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res := runCLI(t, nil, "payload", "job", "dispatch", addr, "-meta", "input=a", "process", "-")
	if res.code != 0 {
		t.Fatalf("job dispatch: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stdout, "Dispatched Job ID = process/dispatch-", "Evaluation ID     = ",
		`Monitoring evaluation`, `Allocation "`, `finished with status "complete"`)

	res = runCLI(t, nil, "", "job", "dispatch", addr, "process")
	if res.code != 1 || !strings.Contains(res.stderr, "payload is missing") || !strings.Contains(res.stderr, `required meta keys ["input"] are missing`) {
		t.Fatalf("bad dispatch: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}
