package reconciler

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

// rolloutWorld is a group of count allocs of version 1 being rolled to
// version 2 (a destructive change) under deployment "d2": the first
// `fresh` names already run version 2, the rest version 1.
func rolloutWorld(count, fresh, maxParallel, canary int) (*world, *structs.Deployment) {
	old := testJob(structs.JobTypeService, count)
	old.CreateIndex = 5
	job := nextVersion(old, func(j *structs.Job) {
		j.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"}
		j.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: maxParallel, Canary: canary, Stagger: 30e9}
	})
	w := newWorld(job, "n1", "n2")
	for i := 0; i < count; i++ {
		a := w.add(i, "n1", structs.AllocClientStatusRunning)
		if i >= fresh {
			a.Job = old
		} else {
			a.DeploymentID = "d2"
		}
	}
	d := &structs.Deployment{ID: "d2", Namespace: job.Namespace, JobID: job.ID, JobVersion: job.Version,
		JobCreateIndex: job.CreateIndex, Status: structs.DeploymentStatusRunning,
		TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: count, DesiredCanaries: canary}}}
	return w, d
}

func healthy(a *structs.Allocation, ok bool) *structs.Allocation {
	a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: structs.BoolPtr(ok)}
	return a
}

func reconcileWith(w *world, d *structs.Deployment) *Result {
	in := w.input()
	in.Deployment = d
	return Reconcile(in)
}

func TestDeploymentPacing(t *testing.T) {
	cases := []struct {
		name  string
		setup func(w *world, d *structs.Deployment)
		// destructive is how many old allocs are replaced now.
		destructive int
		// wait: a rolling follow-up is made.
		wait bool
	}{
		{"two new allocs without health use the whole budget", func(w *world, d *structs.Deployment) {}, 0, true},
		{"one healthy frees one place", func(w *world, d *structs.Deployment) { healthy(w.allocs[0], true) }, 1, true},
		{"both healthy free both places", func(w *world, d *structs.Deployment) {
			healthy(w.allocs[0], true)
			healthy(w.allocs[1], true)
		}, 2, true},
		{"an unhealthy alloc stops progress", func(w *world, d *structs.Deployment) {
			healthy(w.allocs[0], true)
			healthy(w.allocs[1], false)
		}, 0, true},
		{"an unknown alloc is neither in flight nor unhealthy", func(w *world, d *structs.Deployment) {
			w.setNode("n2", structs.NodeStatusDisconnected)
			healthy(w.allocs[0], true)
			w.allocs[1].NodeID = "n2"
			disconnected(w.allocs[1], t0.Add(-60e9))
		}, 2, true},
		{"a paused deployment replaces nothing and waits for resume", func(w *world, d *structs.Deployment) {
			healthy(w.allocs[0], true)
			healthy(w.allocs[1], true)
			d.Status = structs.DeploymentStatusPaused
		}, 0, false},
		{"a failed deployment replaces nothing", func(w *world, d *structs.Deployment) {
			healthy(w.allocs[0], true)
			healthy(w.allocs[1], true)
			d.Status = structs.DeploymentStatusFailed
		}, 0, false},
		{"allocs of another deployment do not count", func(w *world, d *structs.Deployment) {
			w.allocs[0].DeploymentID = "d1"
			healthy(w.allocs[1], true)
		}, 2, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, d := rolloutWorld(5, 2, 2, 0)
			tc.setup(w, d)
			res := reconcileWith(w, d)
			if got := len(placesBy(res, PlaceDestructive)); got != tc.destructive {
				t.Fatalf("destructive = %d, want %d", got, tc.destructive)
			}
			if got := len(res.Followups) > 0; got != tc.wait {
				t.Fatalf("rolling follow-up = %v, want %v (%+v)", got, tc.wait, res.Followups)
			}
			if res.Deployment != nil {
				t.Fatalf("created a second deployment %+v", res.Deployment)
			}
			wantID := d.ID
			if !d.Active() {
				wantID = ""
			}
			if res.DeploymentID != wantID {
				t.Fatalf("placements join %q, want %q", res.DeploymentID, wantID)
			}
		})
	}
}

func TestHaltedDeploymentStillReplacesLostAllocs(t *testing.T) {
	w, d := rolloutWorld(3, 1, 1, 0)
	healthy(w.allocs[0], true)
	d.Status = structs.DeploymentStatusPaused
	w.setNode("n2", structs.NodeStatusDown)
	w.allocs[2].NodeID = "n2"
	res := reconcileWith(w, d)
	if got := len(placesBy(res, PlaceLost)); got != 1 {
		t.Fatalf("lost replacements = %d, want 1", got)
	}
	if got := len(placesBy(res, PlaceDestructive)); got != 0 {
		t.Fatalf("destructive = %d under a paused deployment", got)
	}
	if res.DeploymentID != "d2" {
		t.Fatalf("the replacement joins %q, want the paused deployment", res.DeploymentID)
	}
}

func TestCanariesFirstThenPromotion(t *testing.T) {
	// A new version with canary 2: two canaries named after the lowest
	// old allocs, nothing stopped, a new deployment wanting them.
	w, _ := rolloutWorld(4, 0, 1, 2)
	res := reconcileWith(w, nil)
	canaries := placesBy(res, PlaceCanary)
	if len(canaries) != 2 || len(res.Places) != 2 || len(res.Stops) != 0 {
		t.Fatalf("places %v stops %v, want 2 canaries only", placeNames(res), stopIDs(res))
	}
	equalStrings(t, "canary names", placeNames(res), []string{w.allocs[0].Name, w.allocs[1].Name})
	for _, p := range canaries {
		if !p.Canary || p.Previous != nil {
			t.Fatalf("canary %+v", p)
		}
	}
	d := res.Deployment
	if d == nil || res.DeploymentID != d.ID || d.TaskGroups["web"].DesiredCanaries != 2 || d.TaskGroups["web"].DesiredTotal != 4 {
		t.Fatalf("deployment = %+v", d)
	}
	if d.StatusDescription != structs.DeploymentStatusDescriptionRunningNeedsPromotion {
		t.Fatalf("status description %q", d.StatusDescription)
	}
	if res.DesiredTGUpdates["web"].Canary != 2 {
		t.Fatalf("desired updates = %+v", res.DesiredTGUpdates["web"])
	}

	// The canaries run, healthy: still nothing until promotion.
	w.apply(res, w.firstReady)
	for _, a := range w.allocs[4:] {
		a.DeploymentID = d.ID
		a.ClientStatus = structs.AllocClientStatusRunning
		healthy(a, true).DeploymentStatus.Canary = true
		d.TaskGroups["web"].PlacedCanaries = append(d.TaskGroups["web"].PlacedCanaries, a.ID)
	}
	res = reconcileWith(w, d)
	if len(res.Places) != 0 || len(res.Stops) != 0 || len(res.DeploymentUpdates) != 0 {
		t.Fatalf("before promotion: places %v stops %v updates %+v", placeNames(res), stopIDs(res), res.DeploymentUpdates)
	}

	// Promoted: the canaries' namesakes stop, one more old alloc rolls.
	d.TaskGroups["web"].Promoted = true
	res = reconcileWith(w, d)
	equalStrings(t, "stops", stopIDs(res), []string{w.allocs[0].ID, w.allocs[1].ID})
	for _, s := range res.Stops {
		if s.Description != DescCanaryPromoted {
			t.Fatalf("stop description %q", s.Description)
		}
	}
	if got := placesBy(res, PlaceDestructive); len(got) != 1 || got[0].Name != w.allocs[2].Name {
		t.Fatalf("destructive = %+v, want %s", got, w.allocs[2].Name)
	}
}

func TestCanariesOfAFailedDeploymentAreStopped(t *testing.T) {
	w, d := rolloutWorld(3, 0, 1, 1)
	c := w.add(0, "n2", structs.AllocClientStatusRunning)
	c.DeploymentID = d.ID
	healthy(c, false).DeploymentStatus.Canary = true
	d.TaskGroups["web"].PlacedCanaries = []string{c.ID}
	d.Status = structs.DeploymentStatusFailed
	res := reconcileWith(w, d)
	equalStrings(t, "stops", stopIDs(res), []string{c.ID})
	if len(res.Places) != 0 {
		t.Fatalf("places %v", placeNames(res))
	}
}

func TestDeploymentCompletesWhenEveryAllocIsHealthy(t *testing.T) {
	w, d := rolloutWorld(3, 3, 1, 0)
	healthy(w.allocs[0], true)
	healthy(w.allocs[1], true)
	if res := reconcileWith(w, d); len(res.DeploymentUpdates) != 0 {
		t.Fatalf("2/3 healthy: updates %+v", res.DeploymentUpdates)
	}
	healthy(w.allocs[2], true)
	res := reconcileWith(w, d)
	if len(res.DeploymentUpdates) != 1 || res.DeploymentUpdates[0].Status != structs.DeploymentStatusSuccessful ||
		res.DeploymentUpdates[0].StatusDescription != structs.DeploymentStatusDescriptionSuccessful {
		t.Fatalf("updates %+v, want successful", res.DeploymentUpdates)
	}
	// An unknown alloc is not counted healthy.
	w.setNode("n2", structs.NodeStatusDisconnected)
	w.allocs[2].NodeID = "n2"
	disconnected(w.allocs[2], t0.Add(-60e9))
	if res := reconcileWith(w, d); len(res.DeploymentUpdates) != 0 {
		t.Fatalf("with an unknown alloc: updates %+v", res.DeploymentUpdates)
	}
}

func TestOlderDeploymentIsCancelled(t *testing.T) {
	w, d := rolloutWorld(2, 0, 1, 0)
	d.JobVersion = w.job.Version - 1
	res := reconcileWith(w, d)
	if len(res.DeploymentUpdates) != 1 || res.DeploymentUpdates[0].DeploymentID != d.ID ||
		res.DeploymentUpdates[0].Status != structs.DeploymentStatusCancelled ||
		res.DeploymentUpdates[0].StatusDescription != structs.DeploymentStatusDescriptionNewerJob {
		t.Fatalf("updates %+v", res.DeploymentUpdates)
	}
	if res.Deployment == nil || res.Deployment.ID == d.ID || res.DeploymentID != res.Deployment.ID {
		t.Fatalf("new deployment %+v joined by %q", res.Deployment, res.DeploymentID)
	}
	// A deployment that already ended is left alone.
	d.Status = structs.DeploymentStatusFailed
	if res := reconcileWith(w, d); len(res.DeploymentUpdates) != 0 {
		t.Fatalf("ended deployment updated: %+v", res.DeploymentUpdates)
	}
}

func TestOneRollingFollowUpAtATime(t *testing.T) {
	w, d := rolloutWorld(5, 2, 2, 0)
	healthy(w.allocs[0], true)
	res := reconcileWith(w, d)
	if len(res.Followups) != 1 || res.Followups[0].TriggeredBy != structs.EvalTriggerRollingUpdate {
		t.Fatalf("follow-ups %+v, want one rolling", res.Followups)
	}
	// Another eval (the watcher's, on new health) finds it waiting and
	// starts no second chain.
	w.evals = append(w.evals, res.Followups[0])
	w.evalID = "eval-watcher"
	if res := reconcileWith(w, d); len(res.Followups) != 0 {
		t.Fatalf("second chain of follow-ups %+v", res.Followups)
	}
	// The follow-up itself, when it runs, makes the next one.
	w.evalID = res.Followups[0].ID
	if res := reconcileWith(w, d); len(res.Followups) != 1 {
		t.Fatalf("the follow-up made %d follow-ups, want 1", len(res.Followups))
	}
}

func TestAHaltedGroupDoesNotCancelAnotherGroupsFollowUp(t *testing.T) {
	w, _ := rolloutWorld(3, 0, 1, 0)
	// A second group, "api", of the same job: canarying (it defers with
	// no wait), while "web" rolls with a stagger.
	api := w.job.TaskGroups[0].Copy()
	api.Name = "api"
	api.Update = &structs.UpdateStrategy{MaxParallel: 1, Canary: 1, Stagger: 30e9}
	old := w.allocs[0].Job.Copy()
	oldAPI := old.TaskGroups[0].Copy()
	oldAPI.Name = "api"
	old.TaskGroups = append(old.TaskGroups, oldAPI)
	w.job.TaskGroups = append(w.job.TaskGroups, api) // after "web": its zero wait must not win
	for i := 0; i < 3; i++ {
		w.allocs[i].Job = old
		a := w.add(i, "n1", structs.AllocClientStatusRunning)
		a.TaskGroup, a.Name, a.Job = "api", structs.AllocName(w.job.ID, "api", i), old
	}
	res := reconcileWith(w, nil)
	if got := len(placesBy(res, PlaceCanary)); got != 1 {
		t.Fatalf("api canaries = %d, want 1", got)
	}
	if got := len(placesBy(res, PlaceDestructive)); got != 1 {
		t.Fatalf("web destructive = %d, want 1", got)
	}
	if len(res.Followups) != 1 || !res.Followups[0].WaitUntil.Equal(t0.Add(30e9)) {
		t.Fatalf("follow-ups %+v, want web's rolling one in 30s", res.Followups)
	}
	if st := res.Deployment.TaskGroups; len(st) != 2 || st["api"].DesiredCanaries != 1 || st["web"].DesiredCanaries != 0 {
		t.Fatalf("deployment groups %+v", st)
	}
}

func TestAFailedCanaryWaitsForItsDelayedRescheduleAsACanary(t *testing.T) {
	w, d := rolloutWorld(3, 0, 1, 1)
	w.job.TaskGroups[0].ReschedulePolicy = &structs.ReschedulePolicy{Delay: 30e9, DelayFunction: structs.DelayFunctionConstant, Unlimited: true}
	c := w.add(0, "n2", structs.AllocClientStatusFailed)
	c.DeploymentID = d.ID
	c.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
	c.TaskStates = map[string]*structs.TaskState{"server": {State: structs.TaskStateDead, Failed: true, FinishedAt: t0}}
	d.TaskGroups["web"].PlacedCanaries = []string{c.ID}
	res := reconcileWith(w, d)
	if len(res.Places) != 0 || len(res.Stops) != 0 {
		t.Fatalf("places %v stops %v, want the canary to wait", placeNames(res), stopIDs(res))
	}
	if len(res.Followups) != 1 || res.Followups[0].TriggeredBy != structs.EvalTriggerRetryFailedAlloc {
		t.Fatalf("follow-ups %+v, want the canary's delayed reschedule", res.Followups)
	}
	if u := findUpdate(res, c.ID); u == nil || u.Alloc.FollowupEvalID != res.Followups[0].ID {
		t.Fatalf("canary not linked to its follow-up: %+v", u)
	}

	// When the follow-up runs, the replacement is a canary.
	w.apply(res, w.firstReady)
	w.evalID = res.Followups[0].ID
	w.now = t0.Add(30e9)
	res = reconcileWith(w, d)
	ps := placesBy(res, PlaceReschedule)
	if len(ps) != 1 || !ps[0].Canary || ps[0].Previous.ID != c.ID || len(res.Places) != 1 {
		t.Fatalf("places %+v, want one rescheduled canary", res.Places)
	}
}
