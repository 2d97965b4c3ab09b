package command

import (
	"strings"
	"testing"
)

// deployments answers the deployment list (for prefix resolution) with one
// deployment.
func deployments(f *fakeAgent) *fakeAgent {
	return f.json("GET /v1/deployments", `[{"ID":"`+deplID+`","JobID":"web","JobVersion":3,"Status":"running",
		"StatusDescription":"Deployment is running but requires manual promotion"}]`)
}

const deplUpdate = `{"EvalID":"` + evalID + `","EvalCreateIndex":20,"DeploymentModifyIndex":20,"Index":20}`

func TestDeploymentListIsNomadsTable(t *testing.T) {
	f := deployments(newFakeAgent(t))
	res := runCLI(t, f, "", "deployment", "list")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	wantLines(t, res.stdout,
		"ID        Job ID  Job Version  Status   Description",
		"d1e2f3a4  web     3            running  Deployment is running but requires manual promotion")
	res = runCLI(t, f, "", "deployment", "list", "-json")
	if res.code != 0 || !strings.Contains(res.stdout, `"ID": "`+deplID+`"`) {
		t.Fatalf("-json: exit %d\n%s", res.code, res.stdout)
	}
	f.json("GET /v1/deployments", `[]`)
	if res = runCLI(t, f, "", "deployment", "list"); !strings.Contains(res.stdout, "No deployments found") {
		t.Fatalf("empty list said %q", res.stdout)
	}
}

func TestDeploymentPromoteSendsTheGroupsAndDetaches(t *testing.T) {
	f := deployments(newFakeAgent(t)).json("PUT /v1/deployment/promote/"+deplID, deplUpdate)
	res := runCLI(t, f, "", "deployment", "promote", "-detach", "-group", "web", "-group", "api", "d1e2")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stdout, `Deployment "d1e2f3a4" promoted (groups web, api)`, "Evaluation ID: "+evalID)
	if err := jsonSubset(f.requests("PUT /v1/deployment/promote/" + deplID)[0].body,
		`{"DeploymentID":"`+deplID+`","All":false,"Groups":["web","api"]}`); err != nil {
		t.Error(err)
	}
	if f.requests("GET /v1/evaluation/"+evalID) != nil {
		t.Error("-detach still monitored")
	}
	res = runCLI(t, f, "", "deployment", "promote", "-detach", "d1e2")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if err := jsonSubset(f.requests("PUT /v1/deployment/promote/" + deplID)[1].body, `{"All":true}`); err != nil {
		t.Error(err)
	}
}

func TestDeploymentPromoteSaysWhyTheServerRefused(t *testing.T) {
	f := deployments(newFakeAgent(t))
	f.on("PUT /v1/deployment/promote/"+deplID, reply{status: 400, body: `task group "web" has 0/1 healthy canaries; promote it once all are healthy`})
	res := runCLI(t, f, "", "deployment", "promote", "d1e2")
	if res.code != 1 || !strings.Contains(res.stderr, `"web" has 0/1 healthy canaries`) {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

func TestDeploymentFailReportsTheRevert(t *testing.T) {
	f := deployments(newFakeAgent(t))
	f.json("PUT /v1/deployment/fail/"+deplID, `{"EvalID":"`+evalID+`","RevertedJobVersion":2,"Index":20}`)
	res := runCLI(t, f, "", "deployment", "fail", "-detach", "d1e2")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stdout, `Deployment "d1e2f3a4" failed`, "Auto-reverted to job version 2.", "Evaluation ID: "+evalID)
}

func TestDeploymentPauseAndResume(t *testing.T) {
	f := deployments(newFakeAgent(t))
	f.json("PUT /v1/deployment/pause/"+deplID, `{"Index":20}`)
	res := runCLI(t, f, "", "deployment", "pause", "d1e2")
	if res.code != 0 || !strings.Contains(res.stdout, `Deployment "d1e2f3a4" paused`) {
		t.Fatalf("pause: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if err := jsonSubset(f.requests("PUT /v1/deployment/pause/" + deplID)[0].body, `{"Pause":true}`); err != nil {
		t.Error(err)
	}
	if res := runCLI(t, f, "", "deployment", "pause", "-detach", "d1e2"); res.code == 0 {
		t.Error("pause took -detach, though it makes no evaluation to follow")
	}

	// Resume follows the evaluation and the deployment to its end.
	f.json("PUT /v1/deployment/pause/"+deplID, deplUpdate)
	f.json("GET /v1/evaluation/"+evalID, evalJSON("complete", `"DeploymentID":"`+deplID+`"`))
	f.json("GET /v1/evaluation/"+evalID+"/allocations", `[]`)
	f.json("GET /v1/deployment/"+deplID, `{"ID":"`+deplID+`","JobID":"web","Status":"successful",
		"StatusDescription":"Deployment completed successfully","TaskGroups":{"web":{"DesiredTotal":1,"PlacedAllocs":1,"HealthyAllocs":1}}}`)
	res = runCLI(t, f, "", "deployment", "resume", "d1e2")
	if res.code != 0 {
		t.Fatalf("resume: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stdout, `Deployment "d1e2f3a4" resumed`, `Deployment "d1e2f3a4" finished with status "successful"`)
	reqs := f.requests("PUT /v1/deployment/pause/" + deplID)
	if err := jsonSubset(reqs[len(reqs)-1].body, `{"Pause":false}`); err != nil {
		t.Error(err)
	}
}

func TestDeploymentResumeExitsNonZeroWhenTheDeploymentFails(t *testing.T) {
	f := deployments(newFakeAgent(t)).json("PUT /v1/deployment/pause/"+deplID, deplUpdate)
	f.json("GET /v1/evaluation/"+evalID, evalJSON("complete", `"DeploymentID":"`+deplID+`"`))
	f.json("GET /v1/evaluation/"+evalID+"/allocations", `[]`)
	f.json("GET /v1/deployment/"+deplID, `{"ID":"`+deplID+`","JobID":"web","Status":"failed",
		"StatusDescription":"Failed due to unhealthy allocations","TaskGroups":{"web":{"DesiredTotal":1,"UnhealthyAllocs":1}}}`)
	res := runCLI(t, f, "", "deployment", "resume", "d1e2")
	if res.code == 0 {
		t.Fatalf("exit 0 for a failed deployment\n%s", res.stdout)
	}
	wantLines(t, res.stdout, `Deployment "d1e2f3a4" failed: Failed due to unhealthy allocations`)
}

func TestDeploymentUnblockNeedsOneDeployment(t *testing.T) {
	f := deployments(newFakeAgent(t))
	res := runCLI(t, f, "", "deployment", "unblock")
	if res.code != 1 || !strings.Contains(res.stderr, "This command takes one argument: <deployment>") {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	f.json("GET /v1/deployments", `[]`)
	res = runCLI(t, f, "", "deployment", "unblock", "ffff")
	if res.code != 1 || !strings.Contains(res.stderr, `No deployment(s) with prefix or ID "ffff" found`) {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
}

func TestJobRunFollowsTheDeploymentRatherThanTheNextEvaluation(t *testing.T) {
	f := registered(newFakeAgent(t))
	f.json("GET /v1/evaluation/"+evalID, evalJSON("complete", `"DeploymentID":"`+deplID+`","NextEval":"e2e2e2e2-0000-4000-8000-000000000002"`))
	f.json("GET /v1/evaluation/"+evalID+"/allocations", placedAlloc)
	f.json("GET /v1/deployment/"+deplID, `{"ID":"`+deplID+`","JobID":"web","Status":"failed",
		"StatusDescription":"Failed due to unhealthy allocations - rolling back to job version 1","TaskGroups":{"web":{"DesiredTotal":1,"UnhealthyAllocs":1}}}`)
	res := runCLI(t, f, "", "job", "run", writeJob(t, webJob))
	if res.code != 1 {
		t.Fatalf("exit %d for a failed deployment, want 1\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stdout, `Deployment "d1e2f3a4" failed: Failed due to unhealthy allocations - rolling back to job version 1`)
	if f.requests("GET /v1/evaluation/e2e2e2e2-0000-4000-8000-000000000002") != nil {
		t.Error("followed the next evaluation instead of the deployment")
	}
}

func TestDeploymentStatusMonitorFollowsToTheEnd(t *testing.T) {
	f := deployments(newFakeAgent(t))
	dep := func(status, desc string, healthy int) string {
		return `{"ID":"` + deplID + `","JobID":"web","Status":"` + status + `","StatusDescription":"` + desc + `",
			"TaskGroups":{"web":{"DesiredTotal":2,"PlacedAllocs":2,"HealthyAllocs":` + string(rune('0'+healthy)) + `}}}`
	}
	f.on("GET /v1/deployment/"+deplID,
		reply{body: dep("running", "Deployment is running", 1), index: 13},
		reply{body: dep("successful", "Deployment completed successfully", 2), index: 15})
	res := runCLI(t, f, "", "deployment", "status", "-monitor", "d1e2")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stdout,
		`Monitoring deployment "d1e2f3a4"`,
		`    web         2        2       1        0          N/A`,
		`    web         2        2       2        0          N/A`,
		`Deployment "d1e2f3a4" finished with status "successful"`)
	if res := runCLI(t, f, "", "deployment", "status", "-monitor", "-json", "d1e2"); res.code != 1 {
		t.Fatalf("-monitor with -json: exit %d", res.code)
	}
}
