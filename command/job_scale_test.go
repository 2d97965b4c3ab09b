package command

import (
	"strings"
	"testing"
)

// scaleStatusBody is a job's scale status with the given groups and events
// (JSON values of TaskGroups).
func scaleStatusBody(groups string) string {
	return `{"JobID":"web","Namespace":"default","JobCreateIndex":5,"JobModifyIndex":9,"JobStopped":false,"TaskGroups":{` + groups + `}}`
}

func TestJobScaleOfTheOnlyGroupMonitorsTheEval(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/jobs", `[{"ID":"web"}]`)
	f.json("GET /v1/job/web/scale", scaleStatusBody(`"web":{"Desired":1,"Events":null}`))
	f.json("PUT /v1/job/web/scale", `{"EvalID":"`+evalID+`","EvalCreateIndex":20,"JobModifyIndex":20,"Index":20}`)
	f.json("GET /v1/evaluation/"+evalID, `{"ID":"`+evalID+`","Type":"service","TriggeredBy":"job-scaling","JobID":"web","Status":"complete","CreateIndex":20}`)
	f.json("GET /v1/evaluation/"+evalID+"/allocations", `[]`)
	res := runCLI(t, f, "", "job", "scale", "web", "3")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stdout, `Monitoring evaluation "e1a2b3c4"`, `Evaluation "e1a2b3c4" finished with status "complete"`)
	body := f.requests("PUT /v1/job/web/scale")[0].body
	if err := jsonSubset(body, `{"Count":3,"Target":{"Job":"web","Group":"web"},"Message":"submitted using the Drover CLI","Error":false}`); err != nil {
		t.Fatal(err)
	}
}

func TestJobScaleNamesTheGroupWhenThereAreSeveral(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/jobs", `[{"ID":"web"}]`)
	f.json("GET /v1/job/web/scale", scaleStatusBody(`"web":{"Desired":1},"cache":{"Desired":2}`))
	f.json("PUT /v1/job/web/scale", `{"EvalID":"`+evalID+`","EvalCreateIndex":20,"JobModifyIndex":20}`)

	res := runCLI(t, f, "", "job", "scale", "web", "3")
	if res.code != 1 || !strings.Contains(res.stderr, `Group name required: job "web" has 2 groups (cache, web)`) {
		t.Fatalf("no group with two groups: exit %d %s", res.code, res.stderr)
	}
	res = runCLI(t, f, "", "job", "scale", "web", "db", "3")
	if res.code != 1 || !strings.Contains(res.stderr, `Group "db" not found within job "web" (its groups: cache, web)`) {
		t.Fatalf("unknown group: exit %d %s", res.code, res.stderr)
	}
	if f.requests("PUT /v1/job/web/scale") != nil {
		t.Fatal("a request was sent for a group that does not exist")
	}

	res = runCLI(t, f, "", "job", "scale", "-detach", "web", "cache", "0")
	if res.code != 0 || !strings.Contains(res.stdout, "Evaluation ID: "+evalID) {
		t.Fatalf("detach: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if err := jsonSubset(f.requests("PUT /v1/job/web/scale")[0].body, `{"Count":0,"Target":{"Group":"cache"}}`); err != nil {
		t.Fatal(err)
	}
}

func TestJobScaleRefusesBadArgumentsAndReportsServerErrors(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/jobs", `[{"ID":"web"}]`)
	f.json("GET /v1/job/web/scale", scaleStatusBody(`"web":{"Desired":1}`))
	for _, args := range [][]string{{"web"}, {"web", "a", "b", "c"}} {
		if res := runCLI(t, f, "", append([]string{"job", "scale"}, args...)...); res.code != 1 || !strings.Contains(res.stderr, "two or three arguments") {
			t.Errorf("%v: exit %d %s", args, res.code, res.stderr)
		}
	}
	for _, count := range []string{"-1", "three"} {
		res := runCLI(t, f, "", "job", "scale", "web", "web", count)
		if res.code != 1 || !strings.Contains(res.stderr, "The count must be a non-negative integer") {
			t.Errorf("count %s: exit %d %s", count, res.code, res.stderr)
		}
	}
	f.on("PUT /v1/job/web/scale", reply{status: 400, body: `Count: 9 is greater than the maximum 5 of group "web"'s scaling block`})
	res := runCLI(t, f, "", "job", "scale", "web", "9")
	if res.code != 1 || !strings.Contains(res.stderr, "Error submitting scaling request") || !strings.Contains(res.stderr, "greater than the maximum 5") {
		t.Fatalf("server refusal: exit %d %s", res.code, res.stderr)
	}
}

func TestJobScaleOfAPeriodicJobSaysNoEvalWasCreated(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/jobs", `[{"ID":"web"}]`)
	f.json("GET /v1/job/web/scale", scaleStatusBody(`"web":{"Desired":1}`))
	f.json("PUT /v1/job/web/scale", `{"EvalID":"","JobModifyIndex":20,"Index":20}`)
	res := runCLI(t, f, "", "job", "scale", "web", "2")
	if res.code != 0 || !strings.Contains(res.stdout, "no evaluation was created") {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

func TestJobScalingEventsListsNewestFirst(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/jobs", `[{"ID":"web"}]`)
	f.json("GET /v1/job/web/scale", scaleStatusBody(`
		"web":{"Desired":3,"Events":[
			{"Count":3,"PreviousCount":1,"Message":"up","EvalID":"`+evalID+`","Time":1700000200000000000,"CreateIndex":30},
			{"Count":null,"PreviousCount":1,"Error":true,"Message":"no metrics","EvalID":null,"Time":1700000100000000000,"CreateIndex":20}]},
		"cache":{"Desired":1,"Events":[
			{"Count":1,"PreviousCount":2,"Message":"down","EvalID":null,"Time":1700000150000000000,"CreateIndex":25}]}`))
	res := runCLI(t, f, "", "job", "scaling-events", "web")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "Task Group  Count  PrevCount  Date") {
		t.Fatalf("table:\n%s", res.stdout)
	}
	for i, want := range []string{"web         3      1", "cache       1      2", "web                1"} {
		if !strings.HasPrefix(lines[i+1], want) {
			t.Errorf("row %d = %q, want it to start with %q", i+1, lines[i+1], want)
		}
	}
	res = runCLI(t, f, "", "job", "scaling-events", "-verbose", "web")
	wantLines(t, res.stdout, "Error", "Message", "Eval ID")
	if !strings.Contains(res.stdout, evalID) || !strings.Contains(res.stdout, "true   no metrics") {
		t.Fatalf("verbose table:\n%s", res.stdout)
	}

	f.json("GET /v1/job/web/scale", scaleStatusBody(`"web":{"Desired":1,"Events":[]}`))
	if res := runCLI(t, f, "", "job", "scaling-events", "web"); res.code != 0 || strings.TrimSpace(res.stdout) != "No events found" {
		t.Fatalf("no events: exit %d %q", res.code, res.stdout)
	}
}
