package reconciler

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

func TestNextDelay(t *testing.T) {
	ev := func(at time.Time, d time.Duration) *structs.RescheduleEvent {
		return &structs.RescheduleEvent{RescheduleTime: at.UnixNano(), Delay: d}
	}
	track := func(e ...*structs.RescheduleEvent) *structs.RescheduleTracker {
		return &structs.RescheduleTracker{Events: e}
	}
	exp := &structs.ReschedulePolicy{Delay: 5 * time.Second, DelayFunction: structs.DelayFunctionExponential, MaxDelay: time.Minute, Unlimited: true}
	fib := &structs.ReschedulePolicy{Delay: 5 * time.Second, DelayFunction: structs.DelayFunctionFibonacci, MaxDelay: time.Minute, Unlimited: true}
	con := &structs.ReschedulePolicy{Delay: 5 * time.Second, DelayFunction: structs.DelayFunctionConstant, Unlimited: true}
	recent := t0.Add(-time.Second)
	cases := []struct {
		name   string
		policy *structs.ReschedulePolicy
		tr     *structs.RescheduleTracker
		want   time.Duration
	}{
		{"the first reschedule waits the base delay", exp, nil, 5 * time.Second},
		{"constant always waits the base delay", con, track(ev(recent, 5*time.Second), ev(recent, 5*time.Second)), 5 * time.Second},
		{"exponential doubles the last delay", exp, track(ev(recent, 5*time.Second), ev(recent, 10*time.Second)), 20 * time.Second},
		{"exponential stops at max_delay", exp, track(ev(recent, 40*time.Second)), time.Minute},
		{"fibonacci adds the last two delays", fib, track(ev(recent, 5*time.Second), ev(recent, 5*time.Second), ev(recent, 10*time.Second)), 15 * time.Second},
		{"fibonacci with one event repeats it", fib, track(ev(recent, 5*time.Second)), 5 * time.Second},
		{"fibonacci stops at max_delay", fib, track(ev(recent, 40*time.Second), ev(recent, 50*time.Second)), time.Minute},
		{"a lost replacement's zero delay restarts the series at the base delay", exp, track(ev(recent, 20*time.Second), ev(recent, 0)), 5 * time.Second},
		{"a chain that ran longer than max_delay since its last reschedule starts over", exp,
			track(ev(t0.Add(-2*time.Hour), 40*time.Second)), 5 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := nextDelay(tc.tr, tc.policy, t0); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// failedAlloc adds a failed alloc that finished at finished.
func (w *world) failed(index int, node string, finished time.Time) *structs.Allocation {
	a := w.add(index, node, structs.AllocClientStatusFailed)
	a.TaskStates = map[string]*structs.TaskState{"server": {State: structs.TaskStateDead, Failed: true, FinishedAt: finished}}
	return a
}

func TestReschedule(t *testing.T) {
	policy := func(w *world, p structs.ReschedulePolicy) { w.job.TaskGroups[0].ReschedulePolicy = &p }
	limited := structs.ReschedulePolicy{Attempts: 2, Interval: time.Hour, Delay: 30 * time.Second, DelayFunction: structs.DelayFunctionConstant}
	cases := []struct {
		name  string
		setup func(w *world)
		check func(t *testing.T, w *world, res *Result)
	}{
		{
			name: "a failed alloc whose delay has passed is rescheduled now, carrying its tracker plus one event",
			setup: func(w *world) {
				policy(w, limited)
				f := w.failed(0, "n1", t0.Add(-time.Minute))
				f.RescheduleTracker = &structs.RescheduleTracker{Events: []*structs.RescheduleEvent{{RescheduleTime: t0.Add(-10 * time.Minute).UnixNano(), PrevAllocID: "older", Delay: 30 * time.Second}}}
			},
			check: func(t *testing.T, w *world, res *Result) {
				r := placesBy(res, PlaceReschedule)
				if len(r) != 1 {
					t.Fatalf("want one reschedule, got %+v", res.Places)
				}
				p := r[0]
				f := w.allocs[0]
				if p.Previous.ID != f.ID || p.Name != f.Name || p.StopPrevious == nil || p.StopPrevious.Description != DescRescheduled {
					t.Fatalf("reschedule placement %+v does not replace %s", p, f.ID)
				}
				if n := len(p.RescheduleTracker.Events); n != 2 || p.RescheduleTracker.Events[1].PrevAllocID != f.ID {
					t.Fatalf("tracker = %+v, want the old event plus one for %s", p.RescheduleTracker.Events, f.ID)
				}
				if len(p.PenaltyNodes) != 1 || p.PenaltyNodes[0] != "n1" {
					t.Fatalf("penalty nodes = %v, want the node it failed on", p.PenaltyNodes)
				}
				if len(res.Stops) != 0 {
					t.Fatalf("the failed alloc is stopped only with its replacement, got stops %v", stopIDs(res))
				}
				if res.DesiredTGUpdates["web"].RescheduleNow != 1 {
					t.Fatalf("RescheduleNow = %d", res.DesiredTGUpdates["web"].RescheduleNow)
				}
			},
		},
		{
			name: "a failed alloc whose delay has not passed keeps its slot and gets a follow-up eval",
			setup: func(w *world) {
				policy(w, limited)
				w.failed(0, "n1", t0.Add(-10*time.Second))
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(res.Places) != 2 {
					t.Fatalf("want only the two missing slots placed, got %v", placeNames(res))
				}
				if len(res.Followups) != 1 {
					t.Fatalf("want one follow-up, got %+v", res.Followups)
				}
				e := res.Followups[0]
				if e.TriggeredBy != structs.EvalTriggerRetryFailedAlloc || !e.WaitUntil.Equal(t0.Add(20*time.Second)) || e.Status != structs.EvalStatusPending {
					t.Fatalf("follow-up = %+v, want pending alloc-failure eval at failure+30s", e)
				}
				u := findUpdate(res, w.allocs[0].ID)
				if u == nil || u.Kind != UpdateFollowup || u.Alloc.FollowupEvalID != e.ID {
					t.Fatalf("failed alloc not linked to its follow-up: %+v", u)
				}
				if res.DesiredTGUpdates["web"].RescheduleLater != 1 {
					t.Fatalf("RescheduleLater = %d", res.DesiredTGUpdates["web"].RescheduleLater)
				}
			},
		},
		{
			name: "failed allocs due within five seconds of each other share one follow-up eval",
			setup: func(w *world) {
				policy(w, limited)
				w.failed(0, "n1", t0.Add(-10*time.Second))
				w.failed(1, "n1", t0.Add(-8*time.Second))
				w.failed(2, "n1", t0)
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(res.Followups) != 2 {
					t.Fatalf("want two windows, got %d evals", len(res.Followups))
				}
				a, b, c := findUpdate(res, w.allocs[0].ID), findUpdate(res, w.allocs[1].ID), findUpdate(res, w.allocs[2].ID)
				if a.Alloc.FollowupEvalID != b.Alloc.FollowupEvalID || a.Alloc.FollowupEvalID == c.Alloc.FollowupEvalID {
					t.Fatalf("windows wrong: %s %s %s", a.Alloc.FollowupEvalID, b.Alloc.FollowupEvalID, c.Alloc.FollowupEvalID)
				}
				if !res.Followups[0].WaitUntil.Equal(t0.Add(22 * time.Second)) {
					t.Fatalf("a window waits for its latest member: %s", res.Followups[0].WaitUntil)
				}
			},
		},
		{
			name: "a failed alloc whose follow-up eval is being processed is rescheduled now",
			setup: func(w *world) {
				policy(w, limited)
				f := w.failed(0, "n1", t0.Add(-10*time.Second))
				f.FollowupEvalID = w.evalID
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(placesBy(res, PlaceReschedule)) != 1 || len(res.Followups) != 0 {
					t.Fatalf("want a reschedule now and no follow-up, got %+v", res)
				}
			},
		},
		{
			name: "a failed alloc whose follow-up eval is still pending waits without another eval",
			setup: func(w *world) {
				policy(w, limited)
				f := w.failed(0, "n1", t0.Add(-10*time.Second))
				f.FollowupEvalID = "later-eval"
				w.evals = append(w.evals, &structs.Evaluation{ID: "later-eval", Status: structs.EvalStatusPending})
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(res.Followups) != 0 || len(placesBy(res, PlaceReschedule)) != 0 || findUpdate(res, w.allocs[0].ID) != nil {
					t.Fatalf("want nothing for the waiting alloc, got %+v", res)
				}
			},
		},
		{
			name: "a failed alloc whose follow-up eval vanished gets a new one",
			setup: func(w *world) {
				policy(w, limited)
				f := w.failed(0, "n1", t0.Add(-10*time.Second))
				f.FollowupEvalID = "gc-ed"
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(res.Followups) != 1 {
					t.Fatalf("want a new follow-up, got %+v", res.Followups)
				}
			},
		},
		{
			name: "a failed alloc out of attempts is not rescheduled and keeps its slot",
			setup: func(w *world) {
				policy(w, limited)
				f := w.failed(0, "n1", t0.Add(-time.Hour/2))
				f.RescheduleTracker = &structs.RescheduleTracker{Events: []*structs.RescheduleEvent{
					{RescheduleTime: t0.Add(-50 * time.Minute).UnixNano()}, {RescheduleTime: t0.Add(-40 * time.Minute).UnixNano()}}}
				w.add(1, "n1", structs.AllocClientStatusRunning)
				w.add(2, "n1", structs.AllocClientStatusRunning)
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(res.Places) != 0 || len(res.Followups) != 0 {
					t.Fatalf("exhausted alloc replaced: %+v", res)
				}
			},
		},
		{
			name: "attempts older than the interval no longer count",
			setup: func(w *world) {
				policy(w, limited)
				f := w.failed(0, "n1", t0.Add(-time.Minute))
				f.RescheduleTracker = &structs.RescheduleTracker{Events: []*structs.RescheduleEvent{
					{RescheduleTime: t0.Add(-3 * time.Hour).UnixNano()}, {RescheduleTime: t0.Add(-2 * time.Hour).UnixNano()}}}
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(placesBy(res, PlaceReschedule)) != 1 {
					t.Fatalf("want a reschedule, got %+v", res.Places)
				}
			},
		},
		{
			name: "a forced reschedule ignores the attempts limit",
			setup: func(w *world) {
				policy(w, structs.ReschedulePolicy{DelayFunction: structs.DelayFunctionConstant})
				f := w.failed(0, "n1", t0)
				f.DesiredTransition.ForceReschedule = structs.BoolPtr(true)
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(placesBy(res, PlaceReschedule)) != 1 {
					t.Fatalf("want a forced reschedule, got %+v", res.Places)
				}
			},
		},
		{
			name: "a failed alloc of an older version is replaced by the job update instead of waiting",
			setup: func(w *world) {
				policy(w, limited)
				w.failed(0, "n1", t0)
				w.job = nextVersion(w.job, func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Env = map[string]string{"FIX": "1"} })
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(placesBy(res, PlaceDestructive)) != 1 || len(res.Followups) != 0 {
					t.Fatalf("want a destructive replacement and no follow-up, got %+v", res)
				}
			},
		},
		{
			name: "scaling down gives up a failed alloc before a running one",
			setup: func(w *world) {
				policy(w, limited)
				w.add(0, "n1", structs.AllocClientStatusRunning)
				w.failed(1, "n1", t0)
				w.add(1, "n1", structs.AllocClientStatusRunning)
				w.job.TaskGroups[0].Count = 2
			},
			check: func(t *testing.T, w *world, res *Result) {
				equalStrings(t, "stops", stopIDs(res), []string{w.allocs[1].ID})
				if len(res.Followups) != 0 {
					t.Fatalf("a stopped failed alloc needs no follow-up: %+v", res.Followups)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(testJob(structs.JobTypeService, 3), "n1", "n2")
			tc.setup(w)
			tc.check(t, w, w.reconcile())
		})
	}
}

func TestBatchDefaultPolicyReschedulesOnceAfterFiveSeconds(t *testing.T) {
	w := newWorld(testJob(structs.JobTypeBatch, 1), "n1", "n2")
	f := w.failed(0, "n1", t0.Add(-time.Minute))
	res := w.reconcile()
	if len(placesBy(res, PlaceReschedule)) != 1 {
		t.Fatalf("first failure: want a reschedule, got %+v", res.Places)
	}
	w.apply(res, func(Placement) string { return "n2" })
	// The replacement fails too: one attempt in 24h is all batch gets.
	repl := w.allocs[len(w.allocs)-1]
	repl.ClientStatus = structs.AllocClientStatusFailed
	repl.TaskStates = f.TaskStates
	w.now = t0.Add(time.Minute)
	res = w.reconcile()
	if len(res.Places) != 0 || len(res.Followups) != 0 {
		t.Fatalf("second failure: want no reschedule, got %+v", res)
	}
}
