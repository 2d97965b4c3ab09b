package state

import (
	"fmt"
	"strings"
	"testing"

	"github.com/drover-sched/drover/structs"
)

func count(n int64) *int64 { return &n }

// scale applies sc at index in one write, as the FSM does.
func scale(s *StateStore, index uint64, sc JobScale) error {
	return s.Write(index, func(txn *Txn) error { return txn.ScaleJob(sc) })
}

func scaleReq(job, group string, n *int64, msg string) JobScale {
	return JobScale{JobID: job, Group: group, Count: n, SubmitTime: 777,
		Event: &structs.ScalingEvent{Time: 777, Count: n, Message: msg}}
}

func TestScaleJobWritesVersionEvalAndEventAtOneIndex(t *testing.T) {
	s := testStateStore(t)
	mustJob(t, s, 1, testJob("web"))
	sc := scaleReq("web", "web", count(3), "up")
	sc.Eval = testEval("e1", testJob("web"))
	sc.Eval.TriggeredBy = structs.EvalTriggerScaling
	sc.Event.EvalID = &sc.Eval.ID
	mustNoErr(t, scale(s, 5, sc))

	job, _ := s.JobByID(nil, "default", "web")
	if job.TaskGroups[0].Count != 3 || job.Version != 1 || job.JobModifyIndex != 5 || job.SubmitTime != 777 {
		t.Fatalf("scaled job: count %d version %d job modify index %d submit %d", job.TaskGroups[0].Count, job.Version, job.JobModifyIndex, job.SubmitTime)
	}
	if vs, _ := s.JobVersionsByID(nil, "default", "web"); len(vs) != 2 || vs[1].TaskGroups[0].Count != 1 {
		t.Fatalf("versions after scaling: %d", len(vs))
	}
	eval, _ := s.EvalByID(nil, "e1")
	if eval == nil || eval.CreateIndex != 5 || eval.JobModifyIndex != 5 {
		t.Fatalf("eval: %+v", eval)
	}
	events, _ := s.ScalingEventsByJob(nil, "default", "web")
	if events == nil || len(events.ScalingEvents["web"]) != 1 {
		t.Fatalf("events: %+v", events)
	}
	e := events.ScalingEvents["web"][0]
	if *e.Count != 3 || e.PreviousCount != 1 || e.CreateIndex != 5 || e.Time != 777 || *e.EvalID != "e1" || e.Message != "up" {
		t.Fatalf("event: %+v", e)
	}
	if sc.Event.CreateIndex != 0 || sc.Event.PreviousCount != 0 {
		t.Fatal("the caller's event was modified")
	}
	if idx, _ := s.Index(TableScalingEvents); idx != 5 {
		t.Fatalf("scaling events index %d, want 5", idx)
	}
}

func TestScaleJobWithoutCountOnlyRecordsTheEvent(t *testing.T) {
	s := testStateStore(t)
	before := mustJob(t, s, 1, testJob("web"))
	sc := scaleReq("web", "web", nil, "could not reach the metrics source")
	sc.Event.Error = true
	mustNoErr(t, scale(s, 2, sc))
	job, _ := s.JobByID(nil, "default", "web")
	if job.ModifyIndex != before.ModifyIndex || job.Version != 0 {
		t.Fatalf("an event-only request changed the job: modify index %d version %d", job.ModifyIndex, job.Version)
	}
	events, _ := s.ScalingEventsByJob(nil, "default", "web")
	if e := events.ScalingEvents["web"][0]; e.Count != nil || !e.Error || e.PreviousCount != 1 {
		t.Fatalf("event: %+v", e)
	}
}

func TestScalingEventsAreCappedPerGroupNewestFirst(t *testing.T) {
	s := testStateStore(t)
	mustJob(t, s, 1, testJob("web", "a", "b"))
	for i := range 25 {
		mustNoErr(t, scale(s, uint64(10+i), scaleReq("web", "a", nil, fmt.Sprintf("m%d", i))))
	}
	mustNoErr(t, scale(s, 100, scaleReq("web", "b", nil, "only")))
	events, _ := s.ScalingEventsByJob(nil, "default", "web")
	a := events.ScalingEvents["a"]
	if len(a) != structs.JobTrackedScalingEvents {
		t.Fatalf("group a keeps %d events, want %d", len(a), structs.JobTrackedScalingEvents)
	}
	for i, e := range a {
		if want := fmt.Sprintf("m%d", 24-i); e.Message != want || e.CreateIndex != uint64(34-i) {
			t.Fatalf("event %d is %q at %d, want %q at %d", i, e.Message, e.CreateIndex, want, 34-i)
		}
	}
	if b := events.ScalingEvents["b"]; len(b) != 1 || b[0].Message != "only" {
		t.Fatalf("group b: %+v", b)
	}
}

// A refused request leaves the store exactly as it was: no job change,
// no eval, no event, no index moved.
func TestRefusedScaleChangesNothing(t *testing.T) {
	withScaling := testJob("bounded")
	withScaling.TaskGroups[0].Count = 2
	withScaling.TaskGroups[0].Scaling = &structs.ScalingPolicy{Min: 1, Max: 4, Enabled: true}
	system := testJob("sys")
	system.Type = structs.JobTypeSystem
	cases := []struct {
		name string
		sc   JobScale
		want string
	}{
		{"an unknown job", scaleReq("nope", "web", count(2), ""), "not found"},
		{"an unknown group names the job's groups", scaleReq("web", "db", count(2), ""), `job "web" has no task group "db" (its groups: "web")`},
		{"a negative count", scaleReq("web", "web", count(-1), ""), "Count: must be >= 0, got -1"},
		{"a count above the scaling maximum", scaleReq("bounded", "web", count(5), ""), "greater than the maximum 4"},
		{"a count below the scaling minimum", scaleReq("bounded", "web", count(0), ""), "less than the minimum 1"},
		{"a system job above one", scaleReq("sys", "web", count(2), ""), "can only be scaled to 0 or 1"},
		{"a stale conditional request", func() JobScale { sc := scaleReq("web", "web", count(2), ""); sc.JobModifyIndex = 99; return sc }(), "conflicting job modify index"},
		{"a job with an active deployment", scaleReq("deploying", "web", count(2), ""), structs.ErrScalingBlocked.Error()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			mustJob(t, s, 1, testJob("web"))
			mustJob(t, s, 2, withScaling)
			mustJob(t, s, 3, system)
			deploying := mustJob(t, s, 4, testJob("deploying"))
			mustNoErr(t, s.Write(5, func(tx *Txn) error {
				return tx.UpsertDeployment(&structs.Deployment{ID: "d1", Namespace: "default", JobID: "deploying",
					JobCreateIndex: deploying.CreateIndex, Status: structs.DeploymentStatusRunning})
			}))
			before := allRows(t, s)
			tc.sc.Eval = testEval("e1", testJob(tc.sc.JobID))
			_, checkErr := s.CheckJobScale(nil, tc.sc)
			err := scale(s, 10, tc.sc)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if checkErr == nil || checkErr.Error() != err.Error() {
				t.Fatalf("CheckJobScale said %v, the write %v", checkErr, err)
			}
			if !structs.DeepEqual(before, allRows(t, s)) {
				t.Fatal("a refused scale changed the store")
			}
		})
	}
}

// A finished deployment, or one of an earlier job with the same ID, does
// not block scaling.
func TestOnlyAnActiveDeploymentOfThisJobBlocksScaling(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 1, testJob("web"))
	mustNoErr(t, s.Write(2, func(tx *Txn) error {
		return tx.UpsertDeployment(&structs.Deployment{ID: "old", Namespace: "default", JobID: "web",
			JobCreateIndex: job.CreateIndex - 1, Status: structs.DeploymentStatusRunning})
	}))
	mustNoErr(t, s.Write(3, func(tx *Txn) error {
		return tx.UpsertDeployment(&structs.Deployment{ID: "done", Namespace: "default", JobID: "web",
			JobCreateIndex: job.CreateIndex, Status: structs.DeploymentStatusSuccessful})
	}))
	mustNoErr(t, scale(s, 4, scaleReq("web", "web", count(2), "")))
}

func TestPurgingAJobDeletesItsScalingEvents(t *testing.T) {
	s := testStateStore(t)
	mustJob(t, s, 1, testJob("web"))
	mustNoErr(t, scale(s, 2, scaleReq("web", "web", nil, "x")))
	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.DeleteJob("default", "web") }))
	if ev, _ := s.ScalingEventsByJob(nil, "default", "web"); ev != nil {
		t.Fatalf("events of a purged job remain: %+v", ev)
	}
	if idx, _ := s.Index(TableScalingEvents); idx != 3 {
		t.Fatalf("scaling events index %d after the purge, want 3", idx)
	}
}
