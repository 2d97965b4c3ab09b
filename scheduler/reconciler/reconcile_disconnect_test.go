package reconciler

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// Lost, disconnected, expired and draining allocs.

func TestNodeFailures(t *testing.T) {
	running := structs.AllocClientStatusRunning
	lostAfter := 10 * time.Minute
	cases := []struct {
		name  string
		setup func(w *world)
		check func(t *testing.T, w *world, res *Result)
	}{
		{
			name: "an alloc on a down node is marked lost and replaced, carrying its tracker",
			setup: func(w *world) {
				w.setNode("n2", structs.NodeStatusDown)
				a := w.add(0, "n2", running)
				a.RescheduleTracker = &structs.RescheduleTracker{Events: []*structs.RescheduleEvent{{PrevAllocID: "x", RescheduleTime: 1}}}
			},
			check: func(t *testing.T, w *world, res *Result) {
				a := w.allocs[0]
				if s := findStop(res, a.ID); s == nil || !s.Lost || s.Description != DescLost {
					t.Fatalf("want a lost stop, got %+v", s)
				}
				r := placesBy(res, PlaceLost)
				if len(r) != 1 || r[0].Previous.ID != a.ID || r[0].Name != a.Name || r[0].StopPrevious != nil {
					t.Fatalf("want one lost replacement of %s, got %+v", a.ID, r)
				}
				if ev := r[0].RescheduleTracker.Events; len(ev) != 2 || ev[1].PrevAllocID != a.ID || ev[1].PrevNodeID != "n2" {
					t.Fatalf("tracker not carried with an event: %+v", ev)
				}
			},
		},
		{
			name: "a lost alloc that was already replaced while unknown is not replaced again",
			setup: func(w *world) {
				w.job = withDisconnect(w.job, lostAfter, true, "")
				w.setNode("n2", structs.NodeStatusDown)
				a := disconnected(w.add(0, "n2", running), t0.Add(-time.Minute))
				r := w.add(0, "n1", running)
				r.PreviousAllocation = a.ID
				a.NextAllocation = r.ID
			},
			check: func(t *testing.T, w *world, res *Result) {
				if s := findStop(res, w.allocs[0].ID); s == nil || !s.Lost {
					t.Fatalf("want the unknown alloc marked lost, got %+v", s)
				}
				if len(res.Places) != 2 {
					t.Fatalf("want only the two missing slots, got %v", placeNames(res))
				}
			},
		},
		{
			name: "a group that prevents rescheduling on lost marks allocs on a down node unknown and waits",
			setup: func(w *world) {
				w.job.TaskGroups[0].PreventRescheduleOnLost = true
				w.setNode("n2", structs.NodeStatusDown)
				w.add(0, "n2", running)
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(res.Disconnects) != 1 || res.Disconnects[0].FollowupEvalID != "" {
					t.Fatalf("want an unknown mark with no expiry, got %+v", res.Disconnects)
				}
				if len(placesBy(res, PlaceLost))+len(placesBy(res, PlaceDisconnect)) != 0 || len(res.Followups) != 0 {
					t.Fatalf("want no replacement and no timeout, got %+v", res)
				}
			},
		},
		{
			name: "a disconnected node's alloc with lost_after becomes unknown and gets a replacement",
			setup: func(w *world) {
				w.job = withDisconnect(w.job, lostAfter, true, "")
				w.setNode("n2", structs.NodeStatusDisconnected)
				w.add(0, "n2", running)
			},
			check: func(t *testing.T, w *world, res *Result) {
				a := w.allocs[0]
				if len(res.Disconnects) != 1 || res.Disconnects[0].Alloc.ID != a.ID {
					t.Fatalf("want %s marked unknown, got %+v", a.ID, res.Disconnects)
				}
				r := placesBy(res, PlaceDisconnect)
				if len(r) != 1 || r[0].Previous.ID != a.ID || r[0].Name != a.Name || r[0].RescheduleTracker == nil {
					t.Fatalf("want a replacement carrying a tracker, got %+v", r)
				}
				if len(res.Stops) != 0 {
					t.Fatalf("the unknown alloc must not be stopped: %v", stopIDs(res))
				}
				if res.DesiredTGUpdates["web"].Disconnect != 1 {
					t.Fatalf("Disconnect = %d", res.DesiredTGUpdates["web"].Disconnect)
				}
			},
		},
		{
			name: "the disconnect follow-up eval fires at disconnect time plus lost_after",
			setup: func(w *world) {
				w.job = withDisconnect(w.job, lostAfter, true, "")
				w.setNode("n2", structs.NodeStatusDisconnected)
				w.add(0, "n2", running)
				w.add(1, "n2", running)
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(res.Followups) != 1 {
					t.Fatalf("want one batched timeout eval, got %+v", res.Followups)
				}
				e := res.Followups[0]
				if e.TriggeredBy != structs.EvalTriggerMaxDisconnectTimeout || !e.WaitUntil.Equal(t0.Add(lostAfter)) {
					t.Fatalf("timeout eval = %+v", e)
				}
				for _, d := range res.Disconnects {
					if d.FollowupEvalID != e.ID {
						t.Fatalf("disconnect %s not linked to %s", d.Alloc.ID, e.ID)
					}
				}
			},
		},
		{
			name: "a disconnected node's alloc with replace=false becomes unknown without a replacement",
			setup: func(w *world) {
				w.job = withDisconnect(w.job, lostAfter, false, "")
				w.setNode("n2", structs.NodeStatusDisconnected)
				w.add(0, "n2", running)
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(res.Disconnects) != 1 || len(placesBy(res, PlaceDisconnect)) != 0 {
					t.Fatalf("want unknown without replacement, got %+v", res)
				}
				equalStrings(t, "places", placeNames(res), []string{"web.web[1]", "web.web[2]"})
			},
		},
		{
			name: "an alloc on a disconnected node without a disconnect window is lost at once",
			setup: func(w *world) {
				w.setNode("n2", structs.NodeStatusDisconnected)
				w.add(0, "n2", running)
			},
			check: func(t *testing.T, w *world, res *Result) {
				if s := findStop(res, w.allocs[0].ID); s == nil || !s.Lost {
					t.Fatalf("want a lost stop, got %+v", s)
				}
				if len(placesBy(res, PlaceLost)) != 1 {
					t.Fatalf("want a lost replacement, got %+v", res.Places)
				}
			},
		},
		{
			name: "an unknown alloc whose replacement exists is left alone while it waits",
			setup: func(w *world) {
				w.job = withDisconnect(w.job, lostAfter, true, "")
				w.setNode("n2", structs.NodeStatusDisconnected)
				a := disconnected(w.add(0, "n2", running), t0.Add(-time.Minute))
				r := w.add(0, "n1", running)
				r.PreviousAllocation, a.NextAllocation = a.ID, r.ID
				w.add(1, "n1", running)
				w.add(2, "n1", running)
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(res.Places)+len(res.Stops)+len(res.Updates)+len(res.Disconnects) != 0 {
					t.Fatalf("want a no-op, got %+v", res)
				}
			},
		},
		{
			name: "an unknown alloc whose replacement could not be placed gets another try",
			setup: func(w *world) {
				w.job = withDisconnect(w.job, lostAfter, true, "")
				w.setNode("n2", structs.NodeStatusDisconnected)
				disconnected(w.add(0, "n2", running), t0.Add(-time.Minute))
				w.add(1, "n1", running)
				w.add(2, "n1", running)
			},
			check: func(t *testing.T, w *world, res *Result) {
				r := placesBy(res, PlaceDisconnect)
				if len(r) != 1 || r[0].Previous.ID != w.allocs[0].ID {
					t.Fatalf("want a replacement linked to the unknown alloc, got %+v", res.Places)
				}
			},
		},
		{
			name: "an unknown alloc past lost_after becomes lost and is not replaced twice",
			setup: func(w *world) {
				w.job = withDisconnect(w.job, lostAfter, true, "")
				w.setNode("n2", structs.NodeStatusDisconnected)
				a := disconnected(w.add(0, "n2", running), t0.Add(-11*time.Minute))
				r := w.add(0, "n1", running)
				r.PreviousAllocation, a.NextAllocation = a.ID, r.ID
			},
			check: func(t *testing.T, w *world, res *Result) {
				if s := findStop(res, w.allocs[0].ID); s == nil || !s.Lost || s.Description != DescExpired {
					t.Fatalf("want an expired lost stop, got %+v", s)
				}
				if len(placesBy(res, PlaceLost)) != 0 {
					t.Fatalf("already replaced, got %+v", res.Places)
				}
			},
		},
		{
			name: "an expired unknown alloc with replace=false becomes lost and is replaced",
			setup: func(w *world) {
				w.job = withDisconnect(w.job, lostAfter, false, "")
				w.setNode("n2", structs.NodeStatusDisconnected)
				disconnected(w.add(0, "n2", running), t0.Add(-11*time.Minute))
			},
			check: func(t *testing.T, w *world, res *Result) {
				r := placesBy(res, PlaceLost)
				if len(r) != 1 || r[0].Previous.ID != w.allocs[0].ID {
					t.Fatalf("want a lost replacement, got %+v", res.Places)
				}
			},
		},
		{
			name: "an unknown alloc on a ready node whose client has not reported is neither stopped nor replaced",
			setup: func(w *world) {
				w.job = withDisconnect(w.job, lostAfter, false, "")
				// Inside its report window (see reconcile_report_test.go).
				disconnected(w.add(0, "n1", running), t0.Add(-time.Minute))
				w.add(1, "n1", running)
				w.add(2, "n1", running)
				w.job = nextVersion(w.job, func(j *structs.Job) { j.TaskGroups[0].Count = 1 })
			},
			check: func(t *testing.T, w *world, res *Result) {
				a := w.allocs[0]
				if findStop(res, a.ID) != nil || findUpdate(res, a.ID) != nil || len(res.Places) != 0 {
					t.Fatalf("the unreported alloc was touched: %+v", res)
				}
				equalStrings(t, "stops", stopIDs(res), []string{w.allocs[1].ID, w.allocs[2].ID})
			},
		},
		{
			name: "a scale down that drops an unknown alloc's replacement stops the unknown original too",
			setup: func(w *world) {
				w.job = withDisconnect(w.job, 5*time.Minute, true, structs.ReconcileKeepOriginal)
				w.setNode("n2", structs.NodeStatusDisconnected)
				w.add(0, "n1", running)
				o := disconnected(w.add(1, "n2", running), t0.Add(-time.Minute))
				r := w.add(1, "n1", running)
				r.PreviousAllocation = o.ID
				o.NextAllocation = r.ID
				w.job = nextVersion(w.job, func(j *structs.Job) { j.TaskGroups[0].Count = 1 })
			},
			check: func(t *testing.T, w *world, res *Result) {
				equalStrings(t, "stops", stopIDs(res), []string{w.allocs[1].ID, w.allocs[2].ID})
				if s := findStop(res, w.allocs[1].ID); s.Lost || s.Description != DescScaleDown {
					t.Fatalf("want the original stopped by the scale down, not lost: %+v", s)
				}
				if len(res.Places) != 0 || len(res.Disconnects) != 0 {
					t.Fatalf("want nothing placed or marked, got %+v", res)
				}
			},
		},
		{
			name: "a scale down that drops the replacement of an unreported alloc on a node that is back stops both",
			setup: func(w *world) {
				w.job = withDisconnect(w.job, 5*time.Minute, true, structs.ReconcileKeepOriginal)
				w.setNode("n2", structs.NodeStatusReady)
				w.add(0, "n1", running)
				o := disconnected(w.add(1, "n2", running), t0.Add(-time.Minute))
				r := w.add(1, "n1", running)
				r.PreviousAllocation = o.ID
				o.NextAllocation = r.ID
				w.job = nextVersion(w.job, func(j *structs.Job) { j.TaskGroups[0].Count = 1 })
			},
			check: func(t *testing.T, w *world, res *Result) {
				equalStrings(t, "stops", stopIDs(res), []string{w.allocs[1].ID, w.allocs[2].ID})
				if len(res.Places) != 0 || findUpdate(res, w.allocs[1].ID) != nil {
					t.Fatalf("want the unreported original neither replaced nor reconnected, got %+v", res)
				}
			},
		},
		{
			name: "a scale down gives up an unreported alloc of a higher index rather than a running lower one",
			setup: func(w *world) {
				w.job = withDisconnect(w.job, 5*time.Minute, true, structs.ReconcileKeepOriginal)
				w.setNode("n2", structs.NodeStatusReady)
				w.add(0, "n1", running)
				o := disconnected(w.add(1, "n2", running), t0.Add(-time.Minute))
				r := w.add(1, "n1", running)
				r.PreviousAllocation = o.ID
				r.DesiredStatus = structs.AllocDesiredStatusStop
				o.NextAllocation = r.ID
				w.job = nextVersion(w.job, func(j *structs.Job) { j.TaskGroups[0].Count = 1 })
			},
			check: func(t *testing.T, w *world, res *Result) {
				equalStrings(t, "stops", stopIDs(res), []string{w.allocs[1].ID})
				if len(res.Places) != 0 {
					t.Fatalf("want nothing placed, got %v", placeNames(res))
				}
			},
		},
		{
			name: "an alloc the drainer marked migrates, stopped only once its replacement is placed",
			setup: func(w *world) {
				n := w.setNode("n2", structs.NodeStatusReady)
				n.DrainStrategy = &structs.DrainStrategy{ForceDeadline: t0.Add(time.Hour)}
				a := w.add(0, "n2", running)
				a.DesiredTransition.Migrate = structs.BoolPtr(true)
				a.RescheduleTracker = &structs.RescheduleTracker{Events: []*structs.RescheduleEvent{{PrevAllocID: "x"}}}
			},
			check: func(t *testing.T, w *world, res *Result) {
				m := placesBy(res, PlaceMigrate)
				if len(m) != 1 || m[0].StopPrevious == nil || m[0].StopPrevious.Description != DescMigrating {
					t.Fatalf("want a migration with a conditional stop, got %+v", m)
				}
				if len(m[0].RescheduleTracker.Events) != 1 {
					t.Fatalf("a migration carries the tracker without adding an attempt: %+v", m[0].RescheduleTracker)
				}
				if len(res.Stops) != 0 || res.DesiredTGUpdates["web"].Migrate != 1 {
					t.Fatalf("want no unconditional stop and Migrate=1, got %+v", res)
				}
			},
		},
		{
			name: "an alloc on a node past its drain deadline is stopped even before its replacement is placed",
			setup: func(w *world) {
				n := w.setNode("n2", structs.NodeStatusReady)
				n.DrainStrategy = &structs.DrainStrategy{ForceDeadline: t0.Add(-time.Second)}
				w.add(0, "n2", running)
			},
			check: func(t *testing.T, w *world, res *Result) {
				if s := findStop(res, w.allocs[0].ID); s == nil || s.Description != DescMigrating {
					t.Fatalf("want an unconditional stop, got %+v", s)
				}
				if m := placesBy(res, PlaceMigrate); len(m) != 1 || m[0].StopPrevious != nil {
					t.Fatalf("want a migration without a second stop, got %+v", m)
				}
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
