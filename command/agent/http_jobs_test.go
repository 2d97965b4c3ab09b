package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/structs"
)

func TestJobsEndpoints(t *testing.T) {
	a := serverAgent(t)
	node := registerNode(t, a, nil)

	reg := registerJob(t, a, mockJob("web", 2))
	if reg.EvalID == "" || reg.EvalCreateIndex == 0 || reg.JobModifyIndex == 0 {
		t.Fatalf("register response: %+v", reg)
	}

	t.Run("list has the job with a summary, never null", func(t *testing.T) {
		var list []map[string]any
		resp := callOK(t, "GET", a.URL+"/v1/jobs", nil, &list)
		if len(list) != 1 || list[0]["ID"] != "web" || list[0]["JobSummary"] == nil || list[0]["Type"] != "service" {
			t.Fatalf("list: %v", list)
		}
		if index(t, resp) == 0 || resp.Header.Get("X-Nomad-KnownLeader") != "true" || resp.Header.Get("X-Nomad-LastContact") == "" {
			t.Fatalf("read headers missing: %v", resp.Header)
		}
		var empty []any
		callOK(t, "GET", a.URL+"/v1/jobs?prefix=nope", nil, &empty)
		if empty == nil {
			t.Fatal("an empty list must be [] not null")
		}
	})

	t.Run("read one job", func(t *testing.T) {
		var job structs.Job
		callOK(t, "GET", a.URL+"/v1/job/web", nil, &job)
		if job.ID != "web" || job.Name != "web" || job.Priority != 50 || job.Status == "" || len(job.TaskGroups) != 1 || job.TaskGroups[0].Count != 2 {
			t.Fatalf("job: %+v", job)
		}
	})

	t.Run("allocations evaluations summary versions", func(t *testing.T) {
		var allocs []*structs.AllocListStub
		waitUntil(t, "two allocations", func() bool {
			callOK(t, "GET", a.URL+"/v1/job/web/allocations", nil, &allocs)
			return len(allocs) == 2
		})
		if allocs[0].NodeID != node.ID || allocs[0].JobID != "web" {
			t.Fatalf("allocs: %+v", allocs[0])
		}
		var evals []*structs.Evaluation
		callOK(t, "GET", a.URL+"/v1/job/web/evaluations", nil, &evals)
		if len(evals) == 0 || evals[0].ID != reg.EvalID && evals[len(evals)-1].ID != reg.EvalID {
			t.Fatalf("evals: %+v", evals)
		}
		var sum structs.JobSummary
		callOK(t, "GET", a.URL+"/v1/job/web/summary", nil, &sum)
		if sum.JobID != "web" || sum.Summary["web"].Starting+sum.Summary["web"].Running+sum.Summary["web"].Queued == 0 {
			t.Fatalf("summary: %+v", sum)
		}
		var versions struct {
			Versions []*structs.Job
			Diffs    any
		}
		callOK(t, "GET", a.URL+"/v1/job/web/versions", nil, &versions)
		if len(versions.Versions) != 1 || versions.Versions[0].Version != 0 {
			t.Fatalf("versions: %+v", versions)
		}
		var deps []any
		callOK(t, "GET", a.URL+"/v1/job/web/deployments", nil, &deps)
		if deps == nil {
			t.Fatal("deployments must be a list")
		}
	})

	t.Run("evaluate creates an eval", func(t *testing.T) {
		var out structs.JobRegisterResponse
		callOK(t, "POST", a.URL+"/v1/job/web/evaluate", nil, &out)
		if out.EvalID == "" {
			t.Fatalf("evaluate: %+v", out)
		}
	})

	t.Run("register on the job's own path", func(t *testing.T) {
		var out structs.JobRegisterResponse
		job := mockJob("web", 3)
		resp := callOK(t, "POST", a.URL+"/v1/job/web", api.JobRegisterRequest{Job: job}, &out)
		if out.JobModifyIndex <= reg.JobModifyIndex || index(t, resp) < out.JobModifyIndex {
			t.Fatalf("update: %+v, index %d", out, index(t, resp))
		}
		resp, body := call(t, "POST", a.URL+"/v1/job/other", api.JobRegisterRequest{Job: job})
		requireStatus(t, resp, body, 400, "does not match")
	})

	t.Run("check-and-set register conflicts", func(t *testing.T) {
		resp, body := call(t, "PUT", a.URL+"/v1/jobs", api.JobRegisterRequest{Job: mockJob("web", 1), EnforceIndex: true, JobModifyIndex: 1})
		requireStatus(t, resp, body, http.StatusConflict, "conflicting job modify index")
		// Nomad's `job run -check-index` recognises the refusal by this
		// prefix of the body.
		if !strings.HasPrefix(string(body), "Enforcing job modify index 1: ") {
			t.Fatalf("body %q should start with Nomad's \"Enforcing job modify index 1: \"", body)
		}
		resp, body = call(t, "PUT", a.URL+"/v1/jobs", api.JobRegisterRequest{Job: mockJob("new", 1), EnforceIndex: true, JobModifyIndex: 3})
		requireStatus(t, resp, body, http.StatusConflict, "job not found")
		if !strings.HasPrefix(string(body), "Enforcing job modify index 3: ") {
			t.Fatalf("body %q should start with Nomad's \"Enforcing job modify index 3: \"", body)
		}
	})

	t.Run("stop and purge", func(t *testing.T) {
		var out structs.JobDeregisterResponse
		callOK(t, "DELETE", a.URL+"/v1/job/web", nil, &out)
		if out.EvalID == "" {
			t.Fatalf("deregister: %+v", out)
		}
		var job structs.Job
		callOK(t, "GET", a.URL+"/v1/job/web", nil, &job)
		if !job.Stop {
			t.Fatal("a stopped job keeps existing with Stop set")
		}
		callOK(t, "DELETE", a.URL+"/v1/job/web?purge=true", nil, &out)
		resp, body := call(t, "GET", a.URL+"/v1/job/web", nil)
		requireStatus(t, resp, body, 404, "not found")
	})
}

func TestJobRegisterRejectsBadInput(t *testing.T) {
	a := serverAgent(t)
	cases := []struct {
		name, body, want string
		code             int
	}{
		{"invalid job names the field", `{"Job": {"ID": "x", "Priority": 500, "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock_driver"}]}]}}`, "priority 500", 400},
		{"task without driver", `{"Job": {"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t"}]}]}}`, "driver is missing", 400},
		{"no job", `{"EnforceIndex": true}`, "no Job", 400},
		{"malformed JSON", `{"Job": {`, "not valid JSON", 400},
		{"wrong type names the field", `{"Job": {"ID": "x", "Priority": "high"}}`, `"Job.Priority"`, 400},
		{"empty body", ``, "empty", 400},
		{"job ID .. could never be read back", `{"Job": {"ID": "..", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock_driver"}]}]}}`, `job ID ".." cannot be used`, 400},
		{"job ID . could never be read back", `{"Job": {"ID": ".", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock_driver"}]}]}}`, `job ID "." cannot be used`, 400},
		{"a task name that leaves the alloc dir", `{"Job": {"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "../t", "Driver": "mock_driver"}]}]}}`, `task name "../t" must not contain '/'`, 400},
		{"a task named alloc would be given the shared alloc dir", `{"Job": {"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "alloc", "Driver": "mock_driver"}]}]}}`, `task name "alloc" is reserved`, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := call(t, "PUT", a.URL+"/v1/jobs", tc.body)
			requireStatus(t, resp, body, tc.code, tc.want)
		})
	}
	var list []any
	callOK(t, "GET", a.URL+"/v1/jobs", nil, &list)
	if len(list) != 0 {
		t.Fatalf("a rejected job must change nothing, got %v", list)
	}
}

func TestJobUnknownFieldsAreIgnored(t *testing.T) {
	a := serverAgent(t)
	body := `{"Job": {"ID": "x", "FutureField": {"a": 1}, "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock_driver", "Kind": "", "NewThing": 3}]}]}, "Extra": true}`
	resp, raw := call(t, "PUT", a.URL+"/v1/jobs", body)
	requireStatus(t, resp, raw, 200, "EvalID")
}

func TestMissingObjectsAre404AndWrongMethods405(t *testing.T) {
	a := serverAgent(t)
	for _, path := range []string{
		"/v1/job/nope", "/v1/job/nope/summary", "/v1/job/nope/versions",
		"/v1/node/00000000-0000-0000-0000-000000000000", "/v1/node/abcd",
		"/v1/allocation/00000000-0000-0000-0000-000000000000", "/v1/allocation/ab",
		"/v1/evaluation/00000000-0000-0000-0000-000000000000", "/v1/namespace/other",
	} {
		resp, body := call(t, "GET", a.URL+path, nil)
		requireStatus(t, resp, body, 404, "not found")
	}
	for _, c := range []struct{ method, path string }{
		{"PATCH", "/v1/jobs"}, {"DELETE", "/v1/jobs"}, {"GET", "/v1/job/x/evaluate"}, {"POST", "/v1/nodes"},
		{"GET", "/v1/node/x/drain"}, {"DELETE", "/v1/allocation/x"}, {"PUT", "/v1/status/leader"},
	} {
		resp, body := call(t, c.method, a.URL+c.path, nil)
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: want 405, got %d: %s", c.method, c.path, resp.StatusCode, body)
		}
	}
}

func TestBlockingQueryOnJobs(t *testing.T) {
	a := serverAgent(t)
	first := registerJob(t, a, mockJob("first", 0))
	// The scheduler's work on the first job (eval, job status) moves the
	// index too; the test starts once it is done.
	waitUntil(t, "the first job's evaluation to complete", func() bool {
		var ev structs.Evaluation
		callOK(t, "GET", a.URL+"/v1/evaluation/"+first.EvalID, nil, &ev)
		return ev.TerminalStatus()
	})
	resp := callOK(t, "GET", a.URL+"/v1/jobs", nil, nil)
	idx := index(t, resp)

	t.Run("wait times out with the same index", func(t *testing.T) {
		start := time.Now()
		resp := callOK(t, "GET", fmt.Sprintf("%s/v1/jobs?index=%d&wait=150ms", a.URL, idx), nil, nil)
		if got := index(t, resp); got != idx {
			t.Fatalf("index moved without a change: %d -> %d", idx, got)
		}
		if time.Since(start) < 150*time.Millisecond {
			t.Fatalf("returned after %s, before the wait ran out", time.Since(start))
		}
	})

	t.Run("returns only after a change", func(t *testing.T) {
		type result struct {
			index uint64
			ids   []string
		}
		done := make(chan result, 1)
		go func() {
			resp, err := http.Get(fmt.Sprintf("%s/v1/jobs?index=%d&wait=30s", a.URL, idx))
			if err != nil {
				done <- result{}
				return
			}
			defer resp.Body.Close()
			var list []*structs.JobListStub
			json.NewDecoder(resp.Body).Decode(&list)
			var ids []string
			for _, j := range list {
				ids = append(ids, j.ID)
			}
			var n uint64
			fmt.Sscan(resp.Header.Get("X-Nomad-Index"), &n)
			done <- result{n, ids}
		}()
		select {
		case r := <-done:
			t.Fatalf("blocking query returned before any change: %+v", r)
		case <-time.After(100 * time.Millisecond):
		}
		registerJob(t, a, mockJob("second", 0))
		r := <-done
		if r.index <= idx || !strings.Contains(strings.Join(r.ids, ","), "second") {
			t.Fatalf("blocking query answered %+v (start index %d)", r, idx)
		}
	})

	t.Run("bad index and wait are 400", func(t *testing.T) {
		resp, body := call(t, "GET", a.URL+"/v1/jobs?index=abc", nil)
		requireStatus(t, resp, body, 400, "invalid index")
		resp, body = call(t, "GET", a.URL+"/v1/jobs?wait=forever", nil)
		requireStatus(t, resp, body, 400, "invalid wait")
	})
}

func TestJobsParse(t *testing.T) {
	a := serverAgent(t)
	hcl := `
variable "count" { type = number }
job "parsed" {
  datacenters = ["dc1"]
  group "g" {
    count = var.count
    task "t" {
      driver = "mock_driver"
      config { run_for = "5s" }
    }
  }
}`
	var job api.Job
	callOK(t, "POST", a.URL+"/v1/jobs/parse", api.JobsParseRequest{JobHCL: hcl, Variables: "count = 4", Canonicalize: true}, &job)
	if job.ID == nil || *job.ID != "parsed" || *job.TaskGroups[0].Count != 4 || job.Priority == nil || *job.Priority != 50 {
		t.Fatalf("parsed job: %+v", job)
	}
	resp, body := call(t, "POST", a.URL+"/v1/jobs/parse", api.JobsParseRequest{JobHCL: "job \"x\" {\n  group \"g\" {\n    bogus = 1\n  }\n}\n"})
	requireStatus(t, resp, body, 400, "bogus")
}

func TestJobPlanEndpointAlwaysHasDiffAndAnnotations(t *testing.T) {
	a := serverAgent(t)
	registerNode(t, a, nil)
	var out map[string]any
	callOK(t, "POST", a.URL+"/v1/job/planned/plan", api.JobPlanRequest{Job: mockJob("planned", 1), Diff: true}, &out)
	if out["Diff"] == nil || out["Annotations"] == nil {
		t.Fatalf("plan: %v", out)
	}
	var list []any
	callOK(t, "GET", a.URL+"/v1/jobs", nil, &list)
	if len(list) != 0 {
		t.Fatal("a plan must not register the job")
	}
}
