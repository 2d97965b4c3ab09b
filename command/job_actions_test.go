package command

import (
	"strings"
	"testing"
)

// stopEval answers the deregister of web with evalID, and the eval as done.
func stopEval(f *fakeAgent) *fakeAgent {
	f.json("DELETE /v1/job/web", `{"EvalID":"`+evalID+`"}`)
	f.json("GET /v1/evaluation/"+evalID, `{"ID":"`+evalID+`","Type":"service","TriggeredBy":"job-deregister","JobID":"web","Status":"complete","CreateIndex":20}`)
	f.json("GET /v1/evaluation/"+evalID+"/allocations", `[]`)
	return f
}

func TestJobStopByExactIDMonitorsWithoutAsking(t *testing.T) {
	f := stopEval(newFakeAgent(t)).json("GET /v1/jobs", `[{"ID":"web"},{"ID":"web-2"}]`)
	res := runCLI(t, f, "", "job", "stop", "-purge", "web")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stdout, `Monitoring evaluation "e1a2b3c4"`, `Evaluation "e1a2b3c4" finished with status "complete"`)
	if strings.Contains(res.stdout, "Are you sure") {
		t.Error("asked for confirmation of an exact ID")
	}
	if got := f.requests("DELETE /v1/job/web")[0].query.Get("purge"); got != "true" {
		t.Errorf("purge = %q", got)
	}
	if f.requests("GET /v1/job/web/deployment") != nil {
		t.Error("a stop followed a deployment")
	}
}

func TestJobStopByPrefixAsksFirst(t *testing.T) {
	f := stopEval(newFakeAgent(t)).json("GET /v1/jobs", `[{"ID":"web"}]`)
	res := runCLI(t, f, "n\n", "job", "stop", "we")
	if res.code != 0 || !strings.Contains(res.stdout, `Are you sure you want to stop job "web"? [y/N]`) {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if f.requests("DELETE /v1/job/web") != nil {
		t.Fatal("stopped although the answer was no")
	}
	res = runCLI(t, f, "y\n", "job", "stop", "-detach", "we")
	if res.code != 0 || !strings.Contains(res.stdout, evalID) || f.requests("DELETE /v1/job/web") == nil {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

func TestJobHistoryShowsVersionsAndDiffs(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/jobs", `[{"ID":"web"}]`)
	f.json("GET /v1/job/web/versions", `{"Versions":[{"ID":"web","Version":1,"Stable":true},{"ID":"web","Version":0}],
		"Diffs":[{"Type":"Edited","ID":"web","TaskGroups":[{"Type":"Edited","Name":"web","Fields":[{"Type":"Edited","Name":"Count","Old":"1","New":"2"}]}]}]}`)
	res := runCLI(t, f, "", "job", "history", "-p", "web")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	wantLines(t, res.stdout, "Version = 1", "Stable  = true", "Diff =", `+/- Count: "1" => "2"`, "Version = 0")
	if f.requests("GET /v1/job/web/versions")[0].query.Get("diffs") != "true" {
		t.Error("-p did not ask for diffs")
	}
	res = runCLI(t, f, "", "job", "history", "-version=5", "web")
	if res.code != 1 || !strings.Contains(res.stderr, "has no version 5") {
		t.Errorf("missing version: exit %d %s", res.code, res.stderr)
	}
}

func TestJobRevertSubmitsAndMonitors(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/jobs", `[{"ID":"web"}]`)
	f.json("PUT /v1/job/web/revert", `{"EvalID":"`+evalID+`"}`)
	res := runCLI(t, f, "", "job", "revert", "-detach", "web", "3")
	if res.code != 0 || !strings.Contains(res.stdout, evalID) {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if err := jsonSubset(f.requests("PUT /v1/job/web/revert")[0].body, `{"JobID":"web","JobVersion":3}`); err != nil {
		t.Error(err)
	}
	if res := runCLI(t, f, "", "job", "revert", "web", "latest"); res.code != 1 {
		t.Errorf("bad version: exit %d", res.code)
	}
}

func TestJobInspectPrintsTheJobWrapped(t *testing.T) {
	f := jobInfo(newFakeAgent(t)).json("GET /v1/jobs", `[{"ID":"web"}]`)
	res := runCLI(t, f, "", "job", "inspect", "web")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	if err := jsonSubset(res.stdout, `{"Job":{"ID":"web","Type":"service","Version":2}}`); err != nil {
		t.Error(err)
	}
}

func TestJobValidate(t *testing.T) {
	tests := []struct {
		name      string
		reply     *reply
		wantCode  int
		wantOut   string
		wantError string
	}{
		{"the agent accepts the job", &reply{body: `{"DriverConfigValidated":true}`}, 0, "Job validation successful\n", ""},
		{"the agent lists problems", &reply{body: `{"ValidationErrors":["group web: count must not be negative"],"Error":"1 error"}`}, 1, "",
			"Job validation errors:\n* group web: count must not be negative"},
		{"the agent refuses the job", &reply{status: 400, body: "invalid job: task server has no driver"}, 1, "", "task server has no driver"},
		{"an agent without validation", nil, 0, "checked locally only: the agent does not offer job validation", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeAgent(t)
			if tt.reply != nil {
				f.on("PUT /v1/validate/job", *tt.reply)
			}
			res := runCLI(t, f, "", "job", "validate", writeJob(t, webJob))
			if res.code != tt.wantCode || !strings.Contains(res.stdout, tt.wantOut) || !strings.Contains(res.stderr, tt.wantError) {
				t.Errorf("exit %d\nstdout %q\nstderr %q", res.code, res.stdout, res.stderr)
			}
		})
	}
	res := runCLI(t, nil, "", "job", "validate", "-address=http://127.0.0.1:1", writeJob(t, webJob))
	if res.code != 0 || !strings.Contains(res.stdout, "the agent could not be reached") {
		t.Errorf("unreachable agent: exit %d %q %q", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, nil, "", "job", "validate", writeJob(t, `job "web" {`))
	if res.code != 1 || !strings.Contains(res.stderr, "Error parsing job file") {
		t.Errorf("syntax error: exit %d %q", res.code, res.stderr)
	}
}
