package command

import (
	"strings"
	"testing"
)

const planChanges = `{"JobModifyIndex":9,
 "Diff":{"Type":"Edited","ID":"web","Fields":[{"Type":"Edited","Name":"Priority","Old":"50","New":"60"}],
  "TaskGroups":[{"Type":"Edited","Name":"web","Updates":{"create":2,"in-place update":1},
   "Fields":[{"Type":"Edited","Name":"Count","Old":"1","New":"3","Annotations":["forces create"]}],
   "Objects":[{"Type":"Added","Name":"Meta","Fields":[{"Type":"Added","Name":"team","New":"ops"}]}],
   "Tasks":[{"Type":"None","Name":"server"}]}]},
 "Annotations":{"DesiredTGUpdates":{"web":{"Place":2,"InPlaceUpdate":1}}}}`

func TestJobPlanPrintsTheDiffDryRunAndCheckIndexHint(t *testing.T) {
	f := newFakeAgent(t).json("PUT /v1/job/web/plan", planChanges)
	path := writeJob(t, webJob)
	res := runCLI(t, f, "", "job", "plan", path)
	if res.code != 1 {
		t.Fatalf("exit %d, want 1 (allocations would be created)\n%s%s", res.code, res.stdout, res.stderr)
	}
	wantLines(t, res.stdout,
		`+/- Job: "web"`,
		`+/- Priority: "50" => "60"`,
		`+/- Task Group: "web" (2 create, 1 in-place update)`,
		`  +/- Count: "1" => "3" (forces create)`,
		`  +   Meta {`,
		`    +   team: "ops"`,
		`      }`,
		`      Task: "server"`,
		"Scheduler dry-run:",
		"- All tasks successfully allocated.",
		"Job Modify Index: 9",
		"drover job run -check-index 9 "+path,
	)
	if err := jsonSubset(f.requests("PUT /v1/job/web/plan")[0].body, `{"Job":{"ID":"web"},"Diff":true}`); err != nil {
		t.Error(err)
	}
}

func TestJobPlanExitCodes(t *testing.T) {
	tests := []struct {
		name  string
		reply reply
		want  int
	}{
		{"only in-place updates change nothing that runs", reply{body: `{"Annotations":{"DesiredTGUpdates":{"web":{"InPlaceUpdate":2,"Ignore":1}}}}`}, 0},
		{"a destructive update replaces allocations", reply{body: `{"Annotations":{"DesiredTGUpdates":{"web":{"DestructiveUpdate":1}}}}`}, 1},
		{"stopping allocations is a change", reply{body: `{"Annotations":{"DesiredTGUpdates":{"web":{"Stop":1}}}}`}, 1},
		{"an agent error is 255", reply{status: 500, body: "no leader"}, 255},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeAgent(t).on("PUT /v1/job/web/plan", tt.reply)
			if res := runCLI(t, f, "", "job", "plan", writeJob(t, webJob)); res.code != tt.want {
				t.Errorf("exit %d, want %d\n%s%s", res.code, tt.want, res.stdout, res.stderr)
			}
		})
	}
	if res := runCLI(t, nil, "", "job", "plan"); res.code != 255 {
		t.Errorf("missing argument: exit %d, want 255", res.code)
	}
}

func TestJobPlanShowsWhyPlacementWouldFail(t *testing.T) {
	f := newFakeAgent(t).json("PUT /v1/job/web/plan", `{"JobModifyIndex":0,
		"Diff":{"Type":"Added","ID":"web","TaskGroups":[{"Type":"Added","Name":"web","Updates":{"create":1},
		  "Tasks":[{"Type":"Added","Name":"server"}]}]},
		"Annotations":{"DesiredTGUpdates":{"web":{"Place":1}}},
		"FailedTGAllocs":{"web":{"NodesEvaluated":2,"NodesExhausted":2,"DimensionExhausted":{"cpu":2}}}}`)
	res := runCLI(t, f, "", "job", "plan", writeJob(t, webJob))
	wantLines(t, res.stdout,
		`+ Job: "web"`,
		`+ Task Group: "web" (1 create)`,
		`  + Task: "server"`,
		"- WARNING: Failed to place all allocations.",
		`  Task Group "web" (failed to place 1 allocation):`,
		`    * Resources exhausted on 2 nodes`,
		`    * Dimension "cpu" exhausted on 2 nodes`,
	)
	if strings.Contains(res.stdout, "All tasks successfully allocated") {
		t.Error("claims success despite failures")
	}
}
