package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/helper/testutil/wait"
)

// scalableNomadJob is a service job whose group "web" may run 0 to 3
// copies of a long mock task. Without an update strategy, scaling makes
// no deployment, which would block the next scaling request until it
// finished.
func scalableNomadJob(id string) *nomadapi.Job {
	job := nomadapi.NewServiceJob(id, id, "global", 50).AddDatacenter("dc1")
	job.Update = &nomadapi.UpdateStrategy{MaxParallel: ptr(0)}
	tg := nomadapi.NewTaskGroup("web", 1)
	tg.Scaling = &nomadapi.ScalingPolicy{Min: ptr(int64(0)), Max: ptr(int64(3)), Enabled: ptr(true),
		Policy: map[string]any{"cooldown": "1m"}}
	tg.AddTask(nomadapi.NewTask("app", "mock_driver").SetConfig("run_for", "1h").
		Require(&nomadapi.Resources{CPU: ptr(50), MemoryMB: ptr(32)}))
	job.AddTaskGroup(tg)
	return job
}

// waitScaledTo waits until exactly n allocations of the job are wanted and
// running, and every other one has stopped.
func waitScaledTo(t *testing.T, c *nomadapi.Client, jobID string, n int) {
	t.Helper()
	wait.For(t, 30*time.Second, func() (bool, string) {
		stubs, _, err := c.Jobs().Allocations(jobID, true, nil)
		if err != nil {
			t.Fatalf("allocations of %s: %v", jobID, err)
		}
		running, other := 0, 0
		var states []string
		for _, s := range stubs {
			states = append(states, s.DesiredStatus+"/"+s.ClientStatus)
			switch {
			case s.DesiredStatus == "run" && s.ClientStatus == "running":
				running++
			case s.ClientStatus != "complete" && s.ClientStatus != "failed" && s.ClientStatus != "lost":
				other++
			}
		}
		return running == n && other == 0,
			fmt.Sprintf("want %d running allocs of %s and no other live one, have %s", n, jobID, strings.Join(states, " "))
	}, wait.Every(20*time.Millisecond))
}

// TestNomadClientScalesAJob drives /v1/job/:id/scale with Nomad's own
// client: Scale and ScaleWithRequest grow and shrink the group's running
// allocations, ScaleStatus counts them and lists the events, and bad
// requests are refused with Nomad's status codes without changing the job.
func TestNomadClientScalesAJob(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, nil)
	c := nomadClient(t, a)
	jobs := c.Jobs()
	if _, _, err := jobs.Register(scalableNomadJob("scaled"), nil); err != nil {
		t.Fatal(err)
	}
	waitScaledTo(t, c, "scaled", 1)

	up, wm, err := jobs.Scale("scaled", "web", ptr(3), "up", false, map[string]any{"by": "test"}, nil)
	if err != nil {
		t.Fatalf("scale up: %v", err)
	}
	if up.EvalID == "" || up.EvalCreateIndex == 0 || up.JobModifyIndex == 0 || wm.LastIndex != up.EvalCreateIndex {
		t.Fatalf("scale response %+v, meta %+v", up, wm)
	}
	waitScaledTo(t, c, "scaled", 3)

	st, qm, err := jobs.ScaleStatus("scaled", nil)
	if err != nil {
		t.Fatalf("scale status: %v", err)
	}
	web := st.TaskGroups["web"]
	if st.JobID != "scaled" || st.Namespace != "default" || st.JobStopped || st.JobCreateIndex == 0 || qm.LastIndex == 0 {
		t.Fatalf("scale status %+v meta %+v", st, qm)
	}
	if web.Desired != 3 || web.Placed != 3 || web.Running != 3 || len(web.Events) != 1 {
		t.Fatalf("group status %+v", web)
	}
	ev := web.Events[0]
	if *ev.Count != 3 || ev.PreviousCount != 1 || ev.Message != "up" || ev.Meta["by"] != "test" || *ev.EvalID != up.EvalID || ev.Time == 0 || ev.CreateIndex != up.EvalCreateIndex {
		t.Fatalf("event %+v", ev)
	}

	down, _, err := jobs.ScaleWithRequest("scaled", &nomadapi.ScalingRequest{
		Count: ptr(int64(1)), Target: map[string]string{"Group": "web", "Job": "scaled"}, Message: "down", PolicyOverride: true,
	}, nil)
	if err != nil {
		t.Fatalf("scale down: %v", err)
	}
	waitScaledTo(t, c, "scaled", 1)

	// The job carries its new count as a new version, and its scaling
	// block as submitted.
	job, _, err := jobs.Info("scaled", nil)
	if err != nil {
		t.Fatal(err)
	}
	if *job.TaskGroups[0].Count != 1 || *job.Version != 2 || *job.JobModifyIndex != down.JobModifyIndex {
		t.Fatalf("job after scaling: count %d version %d job modify index %d", *job.TaskGroups[0].Count, *job.Version, *job.JobModifyIndex)
	}
	if s := job.TaskGroups[0].Scaling; s == nil || *s.Max != 3 || *s.Min != 0 || s.Policy["cooldown"] != "1m" || s.Type != "horizontal" {
		t.Fatalf("scaling block read back: %+v", s)
	}

	// An event without a count: recorded, nothing scheduled.
	note, _, err := jobs.Scale("scaled", "web", nil, "metrics unavailable", true, nil, nil)
	if err != nil || note.EvalID != "" {
		t.Fatalf("event-only scale: %v %+v", err, note)
	}

	refusals := []struct {
		name string
		req  *nomadapi.ScalingRequest
		code int
		want string
	}{
		{"above the scaling maximum", &nomadapi.ScalingRequest{Count: ptr(int64(4)), Target: map[string]string{"Group": "web"}}, 400, "greater than the maximum 3"},
		{"a negative count", &nomadapi.ScalingRequest{Count: ptr(int64(-1)), Target: map[string]string{"Group": "web"}}, 400, "Count must be >= 0"},
		{"no group", &nomadapi.ScalingRequest{Count: ptr(int64(2))}, 400, "Target.Group is missing"},
		{"an unknown group", &nomadapi.ScalingRequest{Count: ptr(int64(2)), Target: map[string]string{"Group": "db"}}, 400, `has no task group "db" (its groups: "web")`},
		{"another job in the target", &nomadapi.ScalingRequest{Count: ptr(int64(2)), Target: map[string]string{"Group": "web", "Job": "other"}}, 400, `Target.Job "other" does not match`},
		{"a count with an error", &nomadapi.ScalingRequest{Count: ptr(int64(2)), Error: true, Target: map[string]string{"Group": "web"}}, 400, "Count must not be set when Error is true"},
		{"a stale job modify index", &nomadapi.ScalingRequest{Count: ptr(int64(2)), JobModifyIndex: 1, Target: map[string]string{"Group": "web"}}, 409, "conflicting job modify index"},
		{"a message over its bound", &nomadapi.ScalingRequest{Message: strings.Repeat("m", 900<<10), Target: map[string]string{"Group": "web"}}, 400,
			"Message is 921600 bytes, over the 4096 bytes it may have"},
		{"meta over its bound", &nomadapi.ScalingRequest{Meta: map[string]any{"k": strings.Repeat("v", 900<<10)}, Target: map[string]string{"Group": "web"}}, 400,
			"Meta is 921608 bytes as JSON, over the 8192 bytes it may have"},
	}
	for _, r := range refusals {
		_, _, err := jobs.ScaleWithRequest("scaled", r.req, nil)
		if code := nomadStatusCode(err); code != r.code || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s: got %d %v, want %d with %q", r.name, code, err, r.code, r.want)
		}
	}
	if _, _, err := jobs.Scale("missing", "web", ptr(1), "", false, nil, nil); nomadStatusCode(err) != 404 {
		t.Errorf("scaling a missing job: %v, want a 404", err)
	}
	if _, _, err := jobs.ScaleStatus("missing", nil); nomadStatusCode(err) != 404 {
		t.Errorf("scale status of a missing job: %v, want a 404", err)
	}

	st, _, err = jobs.ScaleStatus("scaled", nil)
	if err != nil {
		t.Fatal(err)
	}
	web = st.TaskGroups["web"]
	if web.Desired != 1 || len(web.Events) != 3 {
		t.Fatalf("after refusals: desired %d, %d events (refusals must record nothing)", web.Desired, len(web.Events))
	}
	if e := web.Events[0]; e.Count != nil || !e.Error || e.EvalID != nil || e.PreviousCount != 1 {
		t.Fatalf("newest event %+v", e)
	}
	if e := web.Events[1]; *e.Count != 1 || e.PreviousCount != 3 || *e.EvalID != down.EvalID {
		t.Fatalf("second event %+v", e)
	}
	if job, _, _ := jobs.Info("scaled", nil); *job.Version != 2 {
		t.Fatalf("refused requests made version %d", *job.Version)
	}
}
