package httpapi

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/command/agent/config"
)

// A null where a job's list (or map) holds objects decoded to a nil
// pointer, which canonicalizing dereferenced: the handler panicked and the
// caller got a closed connection instead of an answer. Every job endpoint
// refuses such a body with a 400 naming the element, and calls no RPC.
func TestJobEndpointsRefuseNullElements(t *testing.T) {
	task := `{"Name": "t", "Driver": "mock_driver"}`
	group := func(fields string) string {
		return fmt.Sprintf(`{"Name": "g", "Tasks": [%s]%s}`, task, fields)
	}
	cases := []struct {
		name, job, want string
	}{
		{"a null group", `{"ID": "x", "TaskGroups": [null]}`, "Job.TaskGroups[0]"},
		{"a null task", `{"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [null]}]}`, "Job.TaskGroups[g].Tasks[0]"},
		{"a null task after a good one", `{"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [` + task + `, null]}]}`, "Job.TaskGroups[g].Tasks[1]"},
		{"a null job constraint", `{"ID": "x", "Constraints": [null], "TaskGroups": [` + group("") + `]}`, "Job.Constraints[0]"},
		{"a null job affinity", `{"ID": "x", "Affinities": [null], "TaskGroups": [` + group("") + `]}`, "Job.Affinities[0]"},
		{"a null job spread", `{"ID": "x", "Spreads": [null], "TaskGroups": [` + group("") + `]}`, "Job.Spreads[0]"},
		{"a null spread target", `{"ID": "x", "Spreads": [{"Attribute": "${node.datacenter}", "SpreadTarget": [null]}], "TaskGroups": [` + group("") + `]}`, "Job.Spreads[0].SpreadTarget[0]"},
		{"a null group service", `{"ID": "x", "TaskGroups": [` + group(`, "Services": [null]`) + `]}`, "Job.TaskGroups[g].Services[0]"},
		{"a null group network", `{"ID": "x", "TaskGroups": [` + group(`, "Networks": [null]`) + `]}`, "Job.TaskGroups[g].Networks[0]"},
		{"a null volume", `{"ID": "x", "TaskGroups": [` + group(`, "Volumes": {"data": null}`) + `]}`, "Job.TaskGroups[g].Volumes[data]"},
		{"a null template", `{"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock_driver", "Templates": [null]}]}]}`, "Job.TaskGroups[g].Tasks[t].Templates[0]"},
		{"a null artifact", `{"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock_driver", "Artifacts": [null]}]}]}`, "Job.TaskGroups[g].Tasks[t].Artifacts[0]"},
		{"a null task constraint", `{"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock_driver", "Constraints": [null]}]}]}`, "Job.TaskGroups[g].Tasks[t].Constraints[0]"},
		{"a null task network", `{"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock_driver", "Resources": {"Networks": [null]}}]}]}`, "Job.TaskGroups[g].Tasks[t].Resources.Networks[0]"},
	}
	endpoints := []struct{ method, path string }{
		{http.MethodPut, "/v1/jobs"},
		{http.MethodPut, "/v1/job/x"},
		{http.MethodPut, "/v1/job/x/plan"},
		{http.MethodPut, "/v1/validate/job"},
	}
	for _, tc := range cases {
		for _, ep := range endpoints {
			t.Run(tc.name+" to "+ep.path, func(t *testing.T) {
				called := ""
				s := &httpAPI{
					rpc: fakeRPC{
						"Job.Register": func(args, reply any) error { called = "Job.Register"; return nil },
						"Job.Plan":     func(args, reply any) error { called = "Job.Plan"; return nil },
					},
					logger: hclog.NewNullLogger(),
					info:   func() AgentInfo { return AgentInfo{Config: config.Dev()} },
				}
				var code int
				var msg string
				func() {
					defer func() {
						if p := recover(); p != nil {
							t.Fatalf("the handler panicked: %v", p)
						}
					}()
					code, msg = serve(s.handler(), ep.method, ep.path, []byte(`{"Job": `+tc.job+`}`))
				}()
				if code != http.StatusBadRequest {
					t.Fatalf("got %d %q, want a 400", code, msg)
				}
				if !strings.Contains(msg, tc.want+" is null") {
					t.Fatalf("the 400 does not name %s as null: %q", tc.want, msg)
				}
				if called != "" {
					t.Fatalf("a refused job reached %s", called)
				}
			})
		}
	}
}

// Nulls where Drover keeps free-form values (the config of a driver
// Drover has no schema for, meta) stay what they were: a driver may give
// null a meaning, and Nomad's client sends null for every field it leaves
// unset.
func TestJobEndpointsKeepNullsInFreeFormValues(t *testing.T) {
	s := &httpAPI{
		rpc:    fakeRPC{"Job.Register": func(args, reply any) error { return nil }},
		logger: hclog.NewNullLogger(),
		info:   func() AgentInfo { return AgentInfo{Config: config.Dev()} },
	}
	body := `{"Job": {"ID": "x", "Constraints": null, "Meta": {"a": null}, "TaskGroups": [{"Name": "g", "Services": null, "Tasks": [
		{"Name": "t", "Driver": "podman", "Templates": null, "Config": {"args": [null, "x"], "opt": null}}]}]}}`
	if code, msg := serve(s.handler(), http.MethodPut, "/v1/jobs", []byte(body)); code != http.StatusOK {
		t.Fatalf("got %d %q, want 200", code, msg)
	}
}
