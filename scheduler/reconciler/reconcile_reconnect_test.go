package reconciler

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// reconnectWorld is a count-1 service job whose original alloc on n2 was
// marked unknown five minutes ago and replaced on n1; n2 is ready again and
// its client has reported the original with status reported.
func reconnectWorld(reconcile, reported string) (w *world, orig, repl *structs.Allocation) {
	w = newWorld(withDisconnect(testJob(structs.JobTypeService, 1), 10*time.Minute, true, reconcile), "n1", "n2")
	orig = disconnected(w.add(0, "n2", structs.AllocClientStatusRunning), t0.Add(-5*time.Minute))
	orig.ClientStatus = reported
	orig.FollowupEvalID = "timeout-eval"
	repl = w.add(0, "n1", structs.AllocClientStatusRunning)
	repl.PreviousAllocation, orig.NextAllocation = orig.ID, repl.ID
	w.evals = append(w.evals, &structs.Evaluation{ID: "timeout-eval", Status: structs.EvalStatusPending, TriggeredBy: structs.EvalTriggerMaxDisconnectTimeout})
	return w, orig, repl
}

func scored(a *structs.Allocation, s float64) {
	a.Metrics = &structs.AllocMetric{ScoreMetaData: []*structs.NodeScoreMeta{{NodeID: a.NodeID, NormScore: s}}}
}

func started(a *structs.Allocation, at time.Time) {
	a.TaskStates = map[string]*structs.TaskState{"server": {State: structs.TaskStateRunning, StartedAt: at}}
}

func TestReconnect(t *testing.T) {
	running := structs.AllocClientStatusRunning
	cases := []struct {
		name      string
		policy    string
		reported  string
		setup     func(w *world, orig, repl *structs.Allocation)
		keepsOrig bool
	}{
		{"best_score keeps the original when it scored higher", structs.ReconcileBestScore, running,
			func(w *world, o, r *structs.Allocation) { scored(o, 0.9); scored(r, 0.5) }, true},
		{"best_score keeps the replacement when it scored higher", structs.ReconcileBestScore, running,
			func(w *world, o, r *structs.Allocation) { scored(o, 0.2); scored(r, 0.5) }, false},
		{"best_score prefers the original on a tie", structs.ReconcileBestScore, running,
			func(w *world, o, r *structs.Allocation) { scored(o, 0.5); scored(r, 0.5) }, true},
		{"best_score keeps a running original over a better-scored replacement that is still pending", structs.ReconcileBestScore, running,
			func(w *world, o, r *structs.Allocation) {
				scored(o, 0.2)
				scored(r, 0.9)
				r.ClientStatus = structs.AllocClientStatusPending
			}, true},
		{"best_score keeps a running replacement over an original that reported pending", structs.ReconcileBestScore, structs.AllocClientStatusPending,
			func(w *world, o, r *structs.Allocation) { scored(o, 0.9); scored(r, 0.2) }, false},
		{"best_score decides by score when both are pending", structs.ReconcileBestScore, structs.AllocClientStatusPending,
			func(w *world, o, r *structs.Allocation) {
				scored(o, 0.2)
				scored(r, 0.9)
				r.ClientStatus = structs.AllocClientStatusPending
			}, false},
		{"an empty reconcile policy means best_score", "", running,
			func(w *world, o, r *structs.Allocation) { scored(o, 0.1); scored(r, 0.5) }, false},
		{"keep_original keeps the original", structs.ReconcileKeepOriginal, running,
			func(w *world, o, r *structs.Allocation) { scored(o, 0.1); scored(r, 0.9) }, true},
		{"keep_replacement keeps the replacement", structs.ReconcileKeepReplacement, running,
			func(w *world, o, r *structs.Allocation) { scored(o, 0.9); scored(r, 0.1) }, false},
		{"longest_running keeps the one that started first", structs.ReconcileLongestRunning, running,
			func(w *world, o, r *structs.Allocation) {
				started(o, t0.Add(-time.Hour))
				started(r, t0.Add(-4*time.Minute))
			}, true},
		{"longest_running keeps the replacement if the original restarted later", structs.ReconcileLongestRunning, running,
			func(w *world, o, r *structs.Allocation) {
				started(o, t0.Add(-time.Minute))
				started(r, t0.Add(-4*time.Minute))
			}, false},
		{"longest_running keeps a started replacement over an original that never started", structs.ReconcileLongestRunning, structs.AllocClientStatusPending,
			func(w *world, o, r *structs.Allocation) { started(r, t0.Add(-4*time.Minute)) }, false},
		{"a replacement running a newer job version always wins, even against keep_original", structs.ReconcileKeepOriginal, running,
			func(w *world, o, r *structs.Allocation) {
				w.job = nextVersion(w.job, func(j *structs.Job) { j.Meta = map[string]string{"v": "2"} })
				r.Job = w.job
			}, false},
		{"a failed replacement loses to a running original", structs.ReconcileKeepReplacement, running,
			func(w *world, o, r *structs.Allocation) { r.ClientStatus = structs.AllocClientStatusFailed }, true},
		{"a replacement whose own node is disconnected loses", structs.ReconcileKeepReplacement, running,
			func(w *world, o, r *structs.Allocation) { w.setNode("n1", structs.NodeStatusDisconnected) }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, orig, repl := reconnectWorld(tc.policy, tc.reported)
			tc.setup(w, orig, repl)
			res := w.reconcile()
			winner, loser := orig, repl
			if !tc.keepsOrig {
				winner, loser = repl, orig
			}
			s := findStop(res, loser.ID)
			if s == nil || s.Description != DescReconnectLoser {
				t.Fatalf("want %s stopped as the reconnect loser, got stops %+v", loser.ID, res.Stops)
			}
			if findStop(res, winner.ID) != nil {
				t.Fatalf("the winner %s was stopped", winner.ID)
			}
			// Whoever wins, the original's reconnect is recorded.
			var rec *structs.Allocation
			if tc.keepsOrig {
				u := findUpdate(res, orig.ID)
				if u == nil || u.Kind&UpdateReconnect == 0 {
					t.Fatalf("kept original has no reconnect update: %+v", res.Updates)
				}
				rec = u.Alloc
				if rec.NextAllocation != "" {
					t.Fatalf("kept original still points at its stopped replacement")
				}
			} else {
				rec = s.Alloc
			}
			last := rec.LastClientStatusState()
			if last == nil || last.Value != tc.reported || !last.Time.Equal(t0) || rec.NeedsToReconnect() {
				t.Fatalf("reconnect not recorded: %+v", rec.AllocStates)
			}
			if len(res.Places) != 0 {
				t.Fatalf("a reconnect must not place: %+v", res.Places)
			}
			if len(res.Cancel) != 1 || res.Cancel[0].ID != "timeout-eval" || res.Cancel[0].Status != structs.EvalStatusCancelled {
				t.Fatalf("want the pending timeout eval cancelled, got %+v", res.Cancel)
			}
			if res.DesiredTGUpdates["web"].Reconnect != 1 {
				t.Fatalf("Reconnect = %d", res.DesiredTGUpdates["web"].Reconnect)
			}
		})
	}
}

func TestReconnectedAllocIsNotReconnectedAgain(t *testing.T) {
	w, orig, _ := reconnectWorld(structs.ReconcileKeepOriginal, structs.AllocClientStatusRunning)
	w.apply(w.reconcile(), w.firstReady)
	w.now = t0.Add(time.Minute)
	res := w.reconcile()
	if got := len(res.Buckets["web"].Reconnecting); got != 0 {
		t.Fatalf("second eval still reconnects %d allocs", got)
	}
	if len(res.Stops)+len(res.Places)+len(res.Updates) != 0 {
		t.Fatalf("second eval is not a no-op: %+v", res)
	}
	if w.byID(orig.ID).DesiredStatus != structs.AllocDesiredStatusRun {
		t.Fatalf("original stopped")
	}
}

func TestReconnectWithoutReplacementKeepsTheOriginal(t *testing.T) {
	w := newWorld(withDisconnect(testJob(structs.JobTypeService, 1), 10*time.Minute, false, ""), "n1")
	o := disconnected(w.add(0, "n1", structs.AllocClientStatusRunning), t0.Add(-5*time.Minute))
	o.ClientStatus = structs.AllocClientStatusRunning
	res := w.reconcile()
	if u := findUpdate(res, o.ID); u == nil || u.Kind != UpdateReconnect {
		t.Fatalf("want a reconnect record, got %+v", res.Updates)
	}
	if len(res.Stops)+len(res.Places) != 0 {
		t.Fatalf("want nothing else, got %+v", res)
	}
}

func TestReconnectedAllocThatFailedFollowsTheReschedulePolicy(t *testing.T) {
	w := newWorld(withDisconnect(testJob(structs.JobTypeService, 1), 10*time.Minute, false, ""), "n1")
	o := disconnected(w.add(0, "n1", structs.AllocClientStatusRunning), t0.Add(-5*time.Minute))
	o.ClientStatus = structs.AllocClientStatusFailed
	o.TaskStates = map[string]*structs.TaskState{"server": {State: structs.TaskStateDead, Failed: true, FinishedAt: t0.Add(-4 * time.Minute)}}
	res := w.reconcile()
	r := placesBy(res, PlaceReschedule)
	if len(r) != 1 || r[0].StopPrevious == nil {
		t.Fatalf("want a reschedule, got %+v", res.Places)
	}
	if last := r[0].StopPrevious.Alloc.LastClientStatusState(); last.Value != structs.AllocClientStatusFailed {
		t.Fatalf("the reschedule's stop must carry the reconnect record, got %+v", last)
	}
	if findUpdate(res, o.ID) != nil {
		t.Fatalf("the alloc must appear once: as the rescheduled previous alloc, not also as an update")
	}
}

func TestReconnectedFailedAllocWithAReplacementIsOnlyRecorded(t *testing.T) {
	w, orig, repl := reconnectWorld("", structs.AllocClientStatusFailed)
	orig.NextAllocation = ""
	res := w.reconcile()
	u := findUpdate(res, orig.ID)
	if u == nil || u.Alloc.NextAllocation != repl.ID {
		t.Fatalf("want a reconnect record linked to the replacement, got %+v", u)
	}
	if len(res.Places)+len(res.Stops) != 0 {
		t.Fatalf("want nothing else, got %+v", res)
	}
}

func TestReconnectedOriginalOnAnOldVersionIsThenUpdated(t *testing.T) {
	w, orig, _ := reconnectWorld(structs.ReconcileKeepOriginal, structs.AllocClientStatusRunning)
	w.job = nextVersion(w.job, func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"} })
	// The replacement runs the old version too, so keep_original applies.
	res := w.reconcile()
	d := placesBy(res, PlaceDestructive)
	if len(d) != 1 || d[0].Previous.ID != orig.ID {
		t.Fatalf("want the kept original destructively updated, got %+v", res.Places)
	}
	if d[0].StopPrevious.Alloc.NeedsToReconnect() {
		t.Fatalf("the destructive stop must carry the reconnect record")
	}
}

func TestTimeoutEvalSharedWithAnAllocStillDisconnectedIsNotCancelled(t *testing.T) {
	w, _, _ := reconnectWorld(structs.ReconcileKeepOriginal, structs.AllocClientStatusRunning)
	w.job.TaskGroups[0].Count = 2
	w.setNode("n3", structs.NodeStatusDisconnected)
	other := disconnected(w.add(1, "n3", structs.AllocClientStatusRunning), t0.Add(-5*time.Minute))
	other.FollowupEvalID = "timeout-eval"
	res := w.reconcile()
	if len(res.Cancel) != 0 {
		t.Fatalf("timeout eval cancelled while %s still waits on it", other.ID)
	}
}
