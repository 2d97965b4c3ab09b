package reconciler

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

// Count changes, job updates and job stops.

func TestCountAndUpdates(t *testing.T) {
	running := structs.AllocClientStatusRunning
	cases := []struct {
		name  string
		setup func(w *world)
		check func(t *testing.T, w *world, res *Result)
	}{
		{
			name:  "a new job places count allocs named from zero",
			setup: func(w *world) {},
			check: func(t *testing.T, w *world, res *Result) {
				equalStrings(t, "places", placeNames(res), []string{"web.web[0]", "web.web[1]", "web.web[2]"})
				if du := res.DesiredTGUpdates["web"]; du.Place != 3 {
					t.Fatalf("DesiredTGUpdates.Place = %d, want 3", du.Place)
				}
			},
		},
		{
			name: "a job at its count needs nothing",
			setup: func(w *world) {
				for i := 0; i < 3; i++ {
					w.add(i, "n1", running)
				}
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(res.Places)+len(res.Stops)+len(res.Updates) != 0 {
					t.Fatalf("expected a no-op, got %+v", res)
				}
				if res.DesiredTGUpdates["web"].Ignore != 3 {
					t.Fatalf("Ignore = %d, want 3", res.DesiredTGUpdates["web"].Ignore)
				}
				if len(res.Keep) != 3 {
					t.Fatalf("Keep = %d, want 3", len(res.Keep))
				}
			},
		},
		{
			name: "scale up reuses the free name indexes first",
			setup: func(w *world) {
				w.add(0, "n1", running)
				w.add(2, "n1", running)
				w.job = nextVersion(w.job, func(j *structs.Job) { j.TaskGroups[0].Count = 4 })
			},
			check: func(t *testing.T, w *world, res *Result) {
				equalStrings(t, "places", placeNames(res), []string{"web.web[1]", "web.web[3]"})
			},
		},
		{
			name: "scale down stops the highest indexes first",
			setup: func(w *world) {
				for i := 0; i < 5; i++ {
					w.add(i, "n1", running)
				}
				w.job = nextVersion(w.job, func(j *structs.Job) { j.TaskGroups[0].Count = 2 })
			},
			check: func(t *testing.T, w *world, res *Result) {
				equalStrings(t, "stops", stopIDs(res), []string{w.allocs[2].ID, w.allocs[3].ID, w.allocs[4].ID})
				if len(res.Updates) != 2 {
					t.Fatalf("the two survivors should move to the new version in place, got %d updates", len(res.Updates))
				}
			},
		},
		{
			name: "scale down gives up duplicate names before high indexes",
			setup: func(w *world) {
				w.add(0, "n1", running)
				w.add(1, "n1", running)
				w.add(1, "n1", running)
				w.add(2, "n1", running)
			},
			check: func(t *testing.T, w *world, res *Result) {
				equalStrings(t, "stops", stopIDs(res), []string{w.allocs[2].ID})
			},
		},
		{
			name: "an in-place change updates running allocs without stopping them",
			setup: func(w *world) {
				w.add(0, "n1", running)
				w.add(1, "n1", running)
				w.add(2, "n1", running)
				w.job = nextVersion(w.job, func(j *structs.Job) {
					j.Meta = map[string]string{"owner": "ops"}
					j.TaskGroups[0].Tasks[0].KillTimeout *= 2
				})
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(res.Stops) != 0 || len(res.Places) != 0 {
					t.Fatalf("in-place update stopped or placed: %+v", res)
				}
				for _, u := range res.Updates {
					if u.Kind != UpdateInPlace || u.Alloc.Job != w.job {
						t.Fatalf("update %+v is not an in-place move to the new job", u)
					}
				}
				if got := res.DesiredTGUpdates["web"].InPlaceUpdate; got != 3 {
					t.Fatalf("InPlaceUpdate = %d, want 3", got)
				}
			},
		},
		{
			name: "a task env change replaces allocs destructively, keeping their names",
			setup: func(w *world) {
				w.add(0, "n1", running)
				w.add(1, "n1", running)
				w.job = nextVersion(w.job, func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Env = map[string]string{"A": "1"} })
			},
			check: func(t *testing.T, w *world, res *Result) {
				d := placesBy(res, PlaceDestructive)
				if len(d) != 2 || d[0].Name != "web.web[0]" || d[1].Name != "web.web[1]" {
					t.Fatalf("destructive placements = %+v", d)
				}
				for _, p := range d {
					if p.StopPrevious == nil || p.StopPrevious.Description != DescUpdated {
						t.Fatalf("destructive placement must stop its previous alloc only once placed: %+v", p)
					}
				}
				if len(res.Stops) != 0 {
					t.Fatalf("no unconditional stops expected, got %v", stopIDs(res))
				}
			},
		},
		{
			name: "destructive updates go max_parallel at a time with a rolling follow-up eval",
			setup: func(w *world) {
				for i := 0; i < 5; i++ {
					w.add(i, "n1", running)
				}
				w.job = nextVersion(w.job, func(j *structs.Job) {
					j.TaskGroups[0].Tasks[0].Resources.MemoryMB = 256
					j.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 2, Stagger: 30e9}
				})
			},
			check: func(t *testing.T, w *world, res *Result) {
				if got := len(placesBy(res, PlaceDestructive)); got != 2 {
					t.Fatalf("destructive = %d, want 2", got)
				}
				if len(res.Followups) != 1 || res.Followups[0].TriggeredBy != structs.EvalTriggerRollingUpdate ||
					!res.Followups[0].WaitUntil.Equal(t0.Add(30e9)) {
					t.Fatalf("want one rolling follow-up in 30s, got %+v", res.Followups)
				}
			},
		},
		{
			name: "a rolling update counts replacements still pending against max_parallel",
			setup: func(w *world) {
				old := w.job
				w.job = nextVersion(old, func(j *structs.Job) {
					j.TaskGroups[0].Tasks[0].Resources.MemoryMB = 256
					j.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 2, Stagger: 30e9}
				})
				n := w.add(0, "n1", structs.AllocClientStatusPending)
				n.PreviousAllocation = "gone"
				for i := 1; i < 4; i++ {
					a := w.add(i, "n1", running)
					a.Job = old
				}
			},
			check: func(t *testing.T, w *world, res *Result) {
				if got := len(placesBy(res, PlaceDestructive)); got != 1 {
					t.Fatalf("destructive = %d, want 1 (one of two already in flight)", got)
				}
			},
		},
		{
			name: "a stopped job stops every non-terminal alloc, including unknown ones on disconnected nodes",
			setup: func(w *world) {
				w.job = withDisconnect(w.job, 600e9, true, "")
				w.setNode("n2", structs.NodeStatusDisconnected)
				w.add(0, "n1", running)
				disconnected(w.add(1, "n2", running), t0.Add(-60e9))
				w.add(2, "n1", structs.AllocClientStatusComplete)
				w.job = nextVersion(w.job, func(j *structs.Job) { j.Stop = true })
			},
			check: func(t *testing.T, w *world, res *Result) {
				equalStrings(t, "stops", stopIDs(res), []string{w.allocs[0].ID, w.allocs[1].ID})
				if len(res.Places) != 0 || len(res.Disconnects) != 0 {
					t.Fatalf("stopped job placed or disconnected: %+v", res)
				}
				for _, s := range res.Stops {
					if s.Lost || s.Description != DescJobStopped {
						t.Fatalf("stop %+v: want a plain job-stopped stop", s)
					}
				}
			},
		},
		{
			name: "a deleted job stops everything and marks allocs on down nodes lost",
			setup: func(w *world) {
				w.setNode("n2", structs.NodeStatusDown)
				w.add(0, "n1", running)
				w.add(1, "n2", running)
				w.job = nil
			},
			check: func(t *testing.T, w *world, res *Result) {
				if s := findStop(res, w.allocs[1].ID); s == nil || !s.Lost {
					t.Fatalf("alloc on down node: want lost stop, got %+v", s)
				}
				if s := findStop(res, w.allocs[0].ID); s == nil || s.Lost {
					t.Fatalf("alloc on ready node: want plain stop, got %+v", s)
				}
			},
		},
		{
			name: "a group removed from the job has its allocs stopped",
			setup: func(w *world) {
				a := w.add(0, "n1", running)
				a.TaskGroup = "old"
				a.Name = "web.old[0]"
			},
			check: func(t *testing.T, w *world, res *Result) {
				if s := findStop(res, w.allocs[0].ID); s == nil || s.Description != DescGroupRemoved {
					t.Fatalf("want group-removed stop, got %+v", s)
				}
				if len(res.Places) != 3 {
					t.Fatalf("the new group still needs its 3 placements, got %d", len(res.Places))
				}
			},
		},
		{
			name: "a completed service alloc is replaced under its own name",
			setup: func(w *world) {
				w.add(0, "n1", running)
				w.add(1, "n1", structs.AllocClientStatusComplete)
				w.add(2, "n1", running)
			},
			check: func(t *testing.T, w *world, res *Result) {
				equalStrings(t, "places", placeNames(res), []string{"web.web[1]"})
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(testJob(structs.JobTypeService, 3), "n1")
			tc.setup(w)
			tc.check(t, w, w.reconcile())
		})
	}
}

func TestBatchCompletedAllocsAreNeverReplaced(t *testing.T) {
	w := newWorld(testJob(structs.JobTypeBatch, 3), "n1")
	w.add(0, "n1", structs.AllocClientStatusComplete)
	w.add(1, "n1", structs.AllocClientStatusComplete)
	w.add(2, "n1", structs.AllocClientStatusRunning)
	res := w.reconcile()
	if len(res.Places) != 0 || len(res.Stops) != 0 {
		t.Fatalf("completed batch allocs were replaced or stopped: %+v", res)
	}
	// Not even when their node goes down.
	w.setNode("n1", structs.NodeStatusDown)
	w.setNode("n2", structs.NodeStatusReady)
	res = w.reconcile()
	equalStrings(t, "lost replacements", placeNames(res), []string{"web.web[2]"})
}

func TestBatchJobUpdateRerunsCompletedAllocsOfTheOldVersion(t *testing.T) {
	w := newWorld(testJob(structs.JobTypeBatch, 2), "n1")
	w.add(0, "n1", structs.AllocClientStatusComplete)
	w.add(1, "n1", structs.AllocClientStatusComplete)
	w.job = nextVersion(w.job, func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Env = map[string]string{"RUN": "2"} })
	res := w.reconcile()
	equalStrings(t, "places", placeNames(res), []string{"web.web[0]", "web.web[1]"})
}
