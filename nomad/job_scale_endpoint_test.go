package nomad

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

func scaleCount(n int64) *int64 { return &n }

func scaleJob(s *Server, jobID, group string, count *int64, msg string) (*structs.JobRegisterResponse, error) {
	var resp structs.JobRegisterResponse
	err := s.RPC("Job.Scale", &structs.JobScaleRequest{
		JobID: jobID, Target: map[string]string{structs.ScalingTargetGroup: group}, Count: count, Message: msg,
	}, &resp)
	return &resp, err
}

func scaleStatus(t *testing.T, s *Server, jobID string, minIndex uint64) *structs.JobScaleStatusResponse {
	t.Helper()
	var resp structs.JobScaleStatusResponse
	args := &structs.JobScaleStatusRequest{JobID: jobID, QueryOptions: structs.QueryOptions{MinQueryIndex: minIndex, MaxQueryTime: 10 * time.Second}}
	if err := s.RPC("Job.ScaleStatus", args, &resp); err != nil {
		t.Fatalf("scale status of %s: %v", jobID, err)
	}
	return &resp
}

func waitLive(t *testing.T, s *Server, jobID string, n int) []*structs.Allocation {
	t.Helper()
	var live []*structs.Allocation
	WaitFor(t, 10*time.Second, func() (bool, string) {
		live = desiredRunning(jobAllocs(t, s, jobID))
		return len(live) == n, fmt.Sprintf("%d live allocs of %s, want %d", len(live), jobID, n)
	})
	return live
}

// scaleTestServer is a leader with one node, on a clock that stands still,
// so the times a scale stamps are known exactly.
func scaleTestServer(t *testing.T) (*Server, *clock.Fake) {
	clock := clock.NewFake(periodicEpoch)
	s := testServer(t, periodicServerConfig(clock))
	WaitForLeader(t, 5*time.Second, s)
	registerNode(t, s, itNode("n1"))
	return s, clock
}

// Scaling is a register with a new count: a new version, an eval
// triggered by job-scaling, and the event, all at the reply's index; the
// scheduler then grows and shrinks the group.
func TestJobScaleCreatesAVersionAndAnEvalAndMovesAllocations(t *testing.T) {
	s, clock := scaleTestServer(t)
	registerJob(t, s, itJob("web", 1))
	waitLive(t, s, "web", 1)

	var resp structs.JobRegisterResponse
	err := s.RPC("Job.Scale", &structs.JobScaleRequest{
		JobID: "web", Target: map[string]string{"Group": "web", "Job": "web", "Namespace": "default"},
		Count: scaleCount(3), Message: "up", Meta: map[string]any{"by": "test"}, PolicyOverride: true,
	}, &resp)
	if err != nil {
		t.Fatal(err)
	}
	if resp.EvalID == "" || resp.Index == 0 || resp.EvalCreateIndex != resp.Index || resp.JobModifyIndex != resp.Index || resp.Warnings != "" {
		t.Fatalf("scale response %+v: the eval, the job and the event must all be written at the reply's index", resp)
	}
	job, _ := s.State().JobByID(nil, "default", "web")
	if job.Version != 1 || job.TaskGroups[0].Count != 3 || job.SubmitTime != clock.Now().UnixNano() {
		t.Fatalf("job after scaling: version %d count %d submit time %d", job.Version, job.TaskGroups[0].Count, job.SubmitTime)
	}
	eval, _ := s.State().EvalByID(nil, resp.EvalID)
	if eval == nil || eval.TriggeredBy != structs.EvalTriggerScaling || eval.CreateIndex != resp.Index || eval.JobModifyIndex != resp.JobModifyIndex {
		t.Fatalf("scale eval: %+v", eval)
	}
	waitLive(t, s, "web", 3)

	down, err := scaleJob(s, "web", "web", scaleCount(1), "down")
	if err != nil {
		t.Fatal(err)
	}
	live := waitLive(t, s, "web", 1)

	st := scaleStatus(t, s, "web", 0).JobScaleStatus
	tg := st.TaskGroups["web"]
	if st.JobID != "web" || st.Namespace != "default" || st.JobStopped || st.JobModifyIndex != down.JobModifyIndex || st.JobCreateIndex != job.CreateIndex {
		t.Fatalf("scale status: %+v", st)
	}
	if tg.Desired != 1 || tg.Placed != 1 || tg.Running != 0 || len(tg.Events) != 2 {
		t.Fatalf("group status: %+v", tg)
	}
	newest, oldest := tg.Events[0], tg.Events[1]
	if *newest.Count != 1 || newest.PreviousCount != 3 || newest.Message != "down" || *newest.EvalID != down.EvalID || newest.CreateIndex != down.Index {
		t.Fatalf("newest event: %+v", newest)
	}
	if *oldest.Count != 3 || oldest.PreviousCount != 1 || oldest.Time != clock.Now().UnixNano() || oldest.Meta["by"] != "test" {
		t.Fatalf("oldest event: %+v", oldest)
	}

	// Running counts what the client reports running.
	if err := reportAlloc(s, live[0], structs.AllocClientStatusRunning); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		tg := scaleStatus(t, s, "web", 0).JobScaleStatus.TaskGroups["web"]
		return tg.Running == 1, fmt.Sprintf("running %d", tg.Running)
	})
}

// A request without a count records only the event: the job, its version
// and its evals stay as they were.
func TestJobScaleWithoutCountRecordsOnlyAnEvent(t *testing.T) {
	s, _ := scaleTestServer(t)
	reg := registerJob(t, s, itJob("web", 1))
	// Once the registration is scheduled, nothing else changes the job.
	WaitFor(t, 10*time.Second, func() (bool, string) {
		return evalStatus(t, s, reg.EvalID) == structs.EvalStatusComplete, "the registration's eval to complete"
	})
	before, _ := s.State().JobByID(nil, "default", "web")
	evalsBefore, _ := s.State().EvalsByJob(nil, "default", "web")
	var resp structs.JobRegisterResponse
	err := s.RPC("Job.Scale", &structs.JobScaleRequest{JobID: "web", Target: map[string]string{"Group": "web"},
		Error: true, Message: "metrics unavailable"}, &resp)
	if err != nil {
		t.Fatal(err)
	}
	if resp.EvalID != "" || resp.Index == 0 || resp.JobModifyIndex != before.JobModifyIndex {
		t.Fatalf("event-only response: %+v", resp)
	}
	after, _ := s.State().JobByID(nil, "default", "web")
	evalsAfter, _ := s.State().EvalsByJob(nil, "default", "web")
	if after.ModifyIndex != before.ModifyIndex || len(evalsAfter) != len(evalsBefore) {
		t.Fatal("an event-only request changed the job or created an eval")
	}
	ev := scaleStatus(t, s, "web", 0).JobScaleStatus.TaskGroups["web"].Events
	if len(ev) != 1 || ev[0].Count != nil || !ev[0].Error || ev[0].EvalID != nil || ev[0].PreviousCount != 1 {
		t.Fatalf("events: %+v", ev)
	}
}

// Every refusal names what was wrong, and leaves the state as it was.
func TestJobScaleRefusalsChangeNothing(t *testing.T) {
	s, _ := scaleTestServer(t)
	web := registerJob(t, s, itJob("web", 1))
	bounded := itJob("bounded", 2)
	bounded.TaskGroups[0].Scaling = &structs.ScalingPolicy{Min: 1, Max: 3, Enabled: true}
	b := registerJob(t, s, bounded)
	// Once both registrations are scheduled nothing else writes, so any
	// index that moves was moved by a refused request.
	WaitFor(t, 10*time.Second, func() (bool, string) {
		return evalStatus(t, s, web.EvalID) == structs.EvalStatusComplete && evalStatus(t, s, b.EvalID) == structs.EvalStatusComplete,
			"the registrations' evals to complete"
	})

	req := func(job string, target map[string]string, count *int64, isErr bool) *structs.JobScaleRequest {
		return &structs.JobScaleRequest{JobID: job, Target: target, Count: count, Error: isErr}
	}
	cases := []struct {
		name       string
		req        *structs.JobScaleRequest
		badRequest bool
		want       string
	}{
		{"no group", req("web", nil, scaleCount(2), false), true, "Target.Group is missing"},
		{"an unknown group", req("web", map[string]string{"Group": "db"}, scaleCount(2), false), true, `job "web" has no task group "db" (its groups: "web")`},
		{"another job in the target", req("web", map[string]string{"Group": "web", "Job": "api"}, scaleCount(2), false), true, `Target.Job "api" does not match`},
		{"another namespace in the target", req("web", map[string]string{"Group": "web", "Namespace": "prod"}, scaleCount(2), false), true, `Target.Namespace "prod" does not match`},
		{"a count with an error", req("web", map[string]string{"Group": "web"}, scaleCount(2), true), true, "Count must not be set when Error is true"},
		{"a negative count", req("web", map[string]string{"Group": "web"}, scaleCount(-2), false), true, "Count: must be >= 0, got -2"},
		{"above the scaling maximum", req("bounded", map[string]string{"Group": "web"}, scaleCount(4), false), true, "Count: 4 is greater than the maximum 3"},
		{"below the scaling minimum", req("bounded", map[string]string{"Group": "web"}, scaleCount(0), false), true, "Count: 0 is less than the minimum 1"},
		{"an unknown job", req("nope", map[string]string{"Group": "web"}, scaleCount(1), false), false, `job "nope": not found`},
		{"a message over its bound", withEvent(req("web", map[string]string{"Group": "web"}, scaleCount(2), false),
			strings.Repeat("m", structs.MaxScalingEventMessage+1), nil), true,
			"Message is 4097 bytes, over the 4096 bytes it may have"},
		{"meta over its bound", withEvent(req("web", map[string]string{"Group": "web"}, nil, false),
			"", map[string]any{"k": strings.Repeat("v", 900<<10)}), true,
			"Meta is 921608 bytes as JSON, over the 8192 bytes it may have"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := s.State().LatestIndex()
			var resp structs.JobRegisterResponse
			err := s.RPC("Job.Scale", tc.req, &resp)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if isBad := strings.HasPrefix(err.Error(), ErrBadRequest.Error()); isBad != tc.badRequest {
				t.Fatalf("%q: bad request %v, want %v", err, isBad, tc.badRequest)
			}
			if after, _ := s.State().LatestIndex(); after != before {
				t.Fatalf("a refused request wrote to the state (index %d -> %d)", before, after)
			}
		})
	}
	for _, id := range []string{"web", "bounded"} {
		if ev, _ := s.State().ScalingEventsByJob(nil, "default", id); ev != nil {
			t.Fatalf("refused requests recorded events for %s: %+v", id, ev)
		}
	}
}

// A stopped job takes the new count but stays stopped, and the answer
// says so; a periodic job gets a new version but no eval, as in Nomad.
func TestJobScaleStoppedAndPeriodicJobs(t *testing.T) {
	s, _ := scaleTestServer(t)
	registerJob(t, s, itJob("web", 1))
	waitLive(t, s, "web", 1)
	var dresp structs.JobDeregisterResponse
	if err := s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: "web"}, &dresp); err != nil {
		t.Fatal(err)
	}
	resp, err := scaleJob(s, "web", "web", scaleCount(2), "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp.Warnings, "stopped") || resp.EvalID == "" {
		t.Fatalf("scaling a stopped job: %+v", resp)
	}
	job, _ := s.State().JobByID(nil, "default", "web")
	if !job.Stop || job.TaskGroups[0].Count != 2 {
		t.Fatalf("stopped job after scaling: stop %v count %d", job.Stop, job.TaskGroups[0].Count)
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		e, _ := s.State().EvalByID(nil, resp.EvalID)
		return e != nil && e.TerminalStatus(), "the scale eval of the stopped job to finish"
	})
	if live := desiredRunning(jobAllocs(t, s, "web")); len(live) != 0 {
		t.Fatalf("scaling a stopped job started %d allocs", len(live))
	}
	if st := scaleStatus(t, s, "web", 0).JobScaleStatus; !st.JobStopped || st.TaskGroups["web"].Desired != 2 {
		t.Fatalf("scale status of the stopped job: %+v", st)
	}

	registerJob(t, s, periodicJob("report", "*/15 * * * *"))
	resp, err = scaleJob(s, "report", "web", scaleCount(3), "")
	if err != nil {
		t.Fatal(err)
	}
	if resp.EvalID != "" || resp.EvalCreateIndex != 0 || resp.JobModifyIndex != resp.Index {
		t.Fatalf("scaling a periodic job: %+v", resp)
	}
	if evals, _ := s.State().EvalsByJob(nil, "default", "report"); len(evals) != 0 {
		t.Fatalf("scaling a periodic job created %d evals", len(evals))
	}
	ev := scaleStatus(t, s, "report", 0).JobScaleStatus.TaskGroups["web"].Events
	if len(ev) != 1 || ev[0].EvalID != nil || *ev[0].Count != 3 {
		t.Fatalf("periodic job events: %+v", ev)
	}
}

// ScaleStatus is a blocking query: it answers once a scaling event (or
// any change to the job or its allocations) is past the caller's index.
func TestJobScaleStatusBlocksUntilTheJobChanges(t *testing.T) {
	s, _ := scaleTestServer(t)
	registerJob(t, s, periodicJob("report", "*/15 * * * *"))
	first := scaleStatus(t, s, "report", 0)
	if first.Index == 0 || first.JobScaleStatus == nil {
		t.Fatalf("first answer: %+v", first)
	}
	done := make(chan *structs.JobScaleStatusResponse, 1)
	go func() {
		var resp structs.JobScaleStatusResponse
		args := &structs.JobScaleStatusRequest{JobID: "report", QueryOptions: structs.QueryOptions{MinQueryIndex: first.Index, MaxQueryTime: 30 * time.Second}}
		if err := s.RPC("Job.ScaleStatus", args, &resp); err != nil {
			t.Error(err)
		}
		done <- &resp
	}()
	resp, err := scaleJob(s, "report", "web", nil, "hello")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-done:
		ev := got.JobScaleStatus.TaskGroups["web"].Events
		if got.Index < resp.Index || len(ev) != 1 || ev[0].Message != "hello" {
			t.Fatalf("blocked query woke with index %d (event at %d) and events %+v", got.Index, resp.Index, ev)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the blocking query did not wake on the scaling event")
	}

	var missing structs.JobScaleStatusResponse
	if err := s.RPC("Job.ScaleStatus", &structs.JobScaleStatusRequest{JobID: "nope"}, &missing); err != nil || missing.JobScaleStatus != nil {
		t.Fatalf("status of a missing job: %v %+v", err, missing.JobScaleStatus)
	}
}

// While the scheduler configuration rejects job registration, scaling is
// refused too, event-only requests included, and nothing is written.
func TestJobScaleIsRefusedWhileRegistrationIsRejected(t *testing.T) {
	// No workers: nothing but the requests under test writes to raft.
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	WaitForLeader(t, 5*time.Second, s)
	registerJob(t, s, itJob("web", 1))
	mustSetSchedulerConfig(t, s, structs.SchedulerConfiguration{RejectJobRegistration: true})
	latest, _ := s.State().LatestIndex()
	for _, count := range []*int64{scaleCount(2), nil} {
		if _, err := scaleJob(s, "web", "web", count, ""); !errors.Is(err, structs.ErrJobRegistrationDisabled) {
			t.Fatalf("scale (count %v) while rejecting: got %v", count, err)
		}
	}
	if now, _ := s.State().LatestIndex(); now != latest {
		t.Fatalf("refused scaling wrote to raft: latest index %d -> %d", latest, now)
	}
	mustSetSchedulerConfig(t, s, structs.SchedulerConfiguration{})
	if _, err := scaleJob(s, "web", "web", scaleCount(2), ""); err != nil {
		t.Fatal(err)
	}
}

// withEvent sets a scaling request's message and meta.
func withEvent(r *structs.JobScaleRequest, message string, meta map[string]any) *structs.JobScaleRequest {
	r.Message, r.Meta = message, meta
	return r
}
