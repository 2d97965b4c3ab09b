package agent

import (
	"bytes"
	"net/http"
	"os"
	"strings"
	"testing"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/jobspec"
)

// TestNomadClientDispatchesAParameterizedJob runs the example
// parameterized job (examples/dispatch.hcl) on a Drover dev agent through
// Nomad's own client: register it, dispatch it with meta and a payload,
// and read the task's output, which shows the payload it found in its
// local directory. The child, the parent's summary and the job list are
// read back in Nomad's shapes.
func TestNomadClientDispatchesAParameterizedJob(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, nil)
	c := nomadClient(t, a)
	src, err := os.ReadFile("../../examples/dispatch.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jobspec.ParseWithConfig(&jobspec.ParseConfig{Path: "dispatch.hcl", Body: src}); err != nil {
		t.Fatalf("Drover's jobspec: %v", err)
	}
	job, err := c.Jobs().ParseHCL(string(src), true)
	if err != nil {
		t.Fatalf("ParseHCL: %v", err)
	}
	reg, _, err := c.Jobs().Register(job, nil)
	if err != nil || reg.EvalID != "" {
		t.Fatalf("register: %v, eval %q (a parameterized job has none)", err, reg.EvalID)
	}
	parent, _, err := c.Jobs().Info("process", nil)
	if err != nil || !parent.IsParameterized() || parent.ParameterizedJob.Payload != "required" {
		t.Fatalf("parent: %v %+v", err, parent)
	}

	payload := []byte("{\"rows\": 3}\n")
	resp, wm, err := c.Jobs().Dispatch("process", map[string]string{"input": "report.csv"}, payload, "", nil)
	if err != nil {
		t.Fatalf("dispatch: %v", err)
	}
	childID := resp.DispatchedJobID
	if !strings.HasPrefix(childID, "process/dispatch-") || resp.EvalID == "" ||
		resp.EvalCreateIndex == 0 || resp.JobCreateIndex != resp.EvalCreateIndex || wm.LastIndex < resp.EvalCreateIndex {
		t.Fatalf("dispatch response %+v, write meta %+v", resp, wm)
	}

	allocs := nomadJobAllocs(t, c, childID, 1, "the dispatched child to finish", clientStatus("complete"))
	want := "processing report.csv (profile standard)\n" + string(payload)
	if out := nomadLogs(t, c, allocs[0], "process", "stdout"); out != want {
		t.Fatalf("task output %q, want %q", out, want)
	}

	child, _, err := c.Jobs().Info(childID, nil)
	if err != nil {
		t.Fatalf("child info: %v", err)
	}
	if *child.ParentID != "process" || !child.Dispatched || child.IsParameterized() || child.ParameterizedJob == nil || !bytes.Equal(child.Payload, payload) ||
		child.Meta["input"] != "report.csv" || child.Meta["profile"] != "standard" || *child.Status != "dead" {
		t.Fatalf("child as Nomad reads it: %s", mustJSON(t, child))
	}
	waitUntil(t, "the parent to count its dead child", func() bool {
		sum, _, err := c.Jobs().Summary("process", nil)
		if err != nil {
			t.Fatalf("summary: %v", err)
		}
		return sum.Children != nil && sum.Children.Dead == 1 && sum.Children.Running == 0 && sum.Children.Pending == 0
	})
	stubs, _, err := c.Jobs().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	var listed bool
	for _, s := range stubs {
		if s.ID == childID {
			listed = s.ParentID == "process" && !s.ParameterizedJob
		}
	}
	if !listed {
		t.Fatalf("job list %s lacks the child with its ParentID", mustJSON(t, stubs))
	}

	// Bad dispatches are 400s that name what was wrong.
	_, _, err = c.Jobs().Dispatch("process", map[string]string{"zone": "eu"}, payload, "", nil)
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), `meta keys ["zone"] are not allowed`) ||
		!strings.Contains(err.Error(), `required meta keys ["input"] are missing`) {
		t.Fatalf("unpermitted meta: %v", err)
	}
	_, _, err = c.Jobs().Dispatch("process", map[string]string{"input": "x"}, nil, "", nil)
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "payload is missing") {
		t.Fatalf("missing payload: %v", err)
	}
}

// TestNomadClientDispatchWithAnIdempotencyToken checks the token the way
// Nomad's client sends it (the idempotency_token query parameter), and the
// agent's own body field and its conflict check.
func TestNomadClientDispatchWithAnIdempotencyToken(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := nomadClient(t, a)
	job := nomadapi.NewBatchJob("slow", "slow", "global", 50)
	job.ParameterizedJob = &nomadapi.ParameterizedJobConfig{}
	job.AddTaskGroup(nomadapi.NewTaskGroup("g", 1).AddTask(nomadapi.NewTask("t", "mock_driver").
		SetConfig("run_for", "1h").Require(&nomadapi.Resources{CPU: ptr(50), MemoryMB: ptr(32)})))
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	tok := &nomadapi.WriteOptions{IdempotencyToken: "once"}
	first, _, err := c.Jobs().Dispatch("slow", nil, nil, "", tok)
	if err != nil || first.EvalID == "" {
		t.Fatalf("first dispatch: %v %+v", err, first)
	}
	again, _, err := c.Jobs().Dispatch("slow", nil, nil, "", tok)
	if err != nil || again.DispatchedJobID != first.DispatchedJobID || again.EvalID != "" || again.JobCreateIndex != first.JobCreateIndex {
		t.Fatalf("repeated dispatch: %v %+v, want child %s and no eval", err, again, first.DispatchedJobID)
	}
	stubs, _, err := c.Jobs().PrefixList("slow/")
	if err != nil || len(stubs) != 1 {
		t.Fatalf("children after a repeated dispatch: %v %d", err, len(stubs))
	}

	// The same token in the body, as Drover's client sends it.
	var body api.JobDispatchResponse
	callOK(t, http.MethodPost, a.URL+"/v1/job/slow/dispatch", api.JobDispatchRequest{JobID: "slow", IdempotencyToken: "once"}, &body)
	if body.DispatchedJobID != first.DispatchedJobID || body.EvalID != "" {
		t.Fatalf("token in the body answered %+v", body)
	}
	r, raw := call(t, http.MethodPut, a.URL+"/v1/job/slow/dispatch?idempotency_token=b", api.JobDispatchRequest{IdempotencyToken: "a"})
	requireStatus(t, r, raw, http.StatusBadRequest, `idempotency token "a" in the body differs from "b"`)
	r, raw = call(t, http.MethodPut, a.URL+"/v1/job/slow/dispatch", api.JobDispatchRequest{JobID: "other"})
	requireStatus(t, r, raw, http.StatusBadRequest, `JobID "other" in the body does not match "slow" in the path`)
	r, raw = call(t, http.MethodPut, a.URL+"/v1/job/nope/dispatch", nil)
	requireStatus(t, r, raw, http.StatusNotFound, `job "nope"`)
}
