package reconciler

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// systemReconnectWorld is a system (or sysbatch) job with a disconnect
// block on ready nodes n1 and n2, each running its alloc; the alloc on n1
// was marked unknown five minutes ago (with a pending timeout eval) and
// its client, back, has now reported it as reported.
func systemReconnectWorld(typ, reported string) (w *world, orig *structs.Allocation) {
	w = systemWorld(typ, 2)
	w.job = withDisconnect(w.job, 10*time.Minute, true, "")
	orig = disconnected(w.add(0, "n1", structs.AllocClientStatusRunning), t0.Add(-5*time.Minute))
	orig.ClientStatus = reported
	orig.FollowupEvalID = "timeout-eval"
	w.add(0, "n2", structs.AllocClientStatusRunning)
	w.evals = append(w.evals, &structs.Evaluation{ID: "timeout-eval", Status: structs.EvalStatusPending, TriggeredBy: structs.EvalTriggerMaxDisconnectTimeout})
	return w, orig
}

// recorded checks that a carries the reconnect record: its newest
// ClientStatus entry is what the client reported, at the eval's time.
func recorded(t *testing.T, a *structs.Allocation, reported string) {
	t.Helper()
	last := a.LastClientStatusState()
	if last == nil || last.Value != reported || !last.Time.Equal(t0) || a.NeedsToReconnect() {
		t.Fatalf("reconnect not recorded on %s: %+v", a.ID, a.AllocStates)
	}
}

func TestSystemReconnect(t *testing.T) {
	running := structs.AllocClientStatusRunning
	cases := []struct {
		name     string
		typ      string
		reported string
		setup    func(w *world, orig *structs.Allocation)
		check    func(t *testing.T, w *world, orig *structs.Allocation, res *Result)
	}{
		{
			name: "a system alloc reported running after its node came back is kept, recorded, and its timeout canceled",
			typ:  structs.JobTypeSystem, reported: running,
			check: func(t *testing.T, w *world, orig *structs.Allocation, res *Result) {
				u := findUpdate(res, orig.ID)
				if u == nil || u.Kind != UpdateReconnect {
					t.Fatalf("want a reconnect record, got %+v", res.Updates)
				}
				recorded(t, u.Alloc, running)
				if len(res.Stops)+len(res.Places) != 0 {
					t.Fatalf("a reconnect of the only alloc on its node must not stop or place: %+v", res)
				}
				if len(res.Cancel) != 1 || res.Cancel[0].ID != "timeout-eval" {
					t.Fatalf("want the timeout eval canceled, got %+v", res.Cancel)
				}
				if res.DesiredTGUpdates["web"].Reconnect != 1 {
					t.Fatalf("Reconnect = %d", res.DesiredTGUpdates["web"].Reconnect)
				}
				kept := false
				for _, a := range res.Keep {
					kept = kept || a.ID == orig.ID
				}
				if !kept {
					t.Fatalf("reconnected alloc not kept: %+v", res.Keep)
				}
			},
		},
		{
			name: "a system alloc reported failed after its node came back is replaced on its node, linked and recorded",
			typ:  structs.JobTypeSystem, reported: structs.AllocClientStatusFailed,
			check: func(t *testing.T, w *world, orig *structs.Allocation, res *Result) {
				if len(res.Places) != 1 || res.Places[0].NodeID != "n1" || res.Places[0].Previous == nil || res.Places[0].Previous.ID != orig.ID {
					t.Fatalf("want a replacement on n1 linked to the failed alloc, got %+v", res.Places)
				}
				if p := res.Places[0]; p.StopPrevious == nil {
					t.Fatalf("the failed alloc must be stopped by its replacement")
				} else {
					recorded(t, p.StopPrevious.Alloc, structs.AllocClientStatusFailed)
				}
				if findUpdate(res, orig.ID) != nil {
					t.Fatalf("the alloc must appear once: as the replaced previous alloc, not also as an update")
				}
			},
		},
		{
			name: "a sysbatch alloc that completed while its node was away is recorded and not run again",
			typ:  structs.JobTypeSysBatch, reported: structs.AllocClientStatusComplete,
			check: func(t *testing.T, w *world, orig *structs.Allocation, res *Result) {
				if u := findUpdate(res, orig.ID); u == nil {
					t.Fatalf("want a reconnect record, got %+v", res.Updates)
				} else {
					recorded(t, u.Alloc, structs.AllocClientStatusComplete)
				}
				if len(res.Places)+len(res.Stops) != 0 {
					t.Fatalf("a completed sysbatch alloc must not run again: %+v", res)
				}
			},
		},
		{
			name: "a reconnected system alloc of an older version is then updated on its node, carrying the record",
			typ:  structs.JobTypeSystem, reported: running,
			setup: func(w *world, orig *structs.Allocation) {
				w.job = nextVersion(w.job, func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"} })
			},
			check: func(t *testing.T, w *world, orig *structs.Allocation, res *Result) {
				s := findStop(res, orig.ID)
				if s == nil || s.Description != DescUpdated {
					t.Fatalf("want the old version stopped for the update, got %+v", res.Stops)
				}
				recorded(t, s.Alloc, running)
				var on []string
				for _, p := range placesBy(res, PlaceDestructive) {
					on = append(on, p.NodeID)
				}
				equalStrings(t, "destructive placements", on, []string{"n1", "n2"})
			},
		},
		{
			name: "a reconnected system alloc whose node left the job's datacenters is stopped, carrying the record",
			typ:  structs.JobTypeSystem, reported: running,
			setup: func(w *world, orig *structs.Allocation) {
				w.nodes["n1"].Datacenter = "dc2"
			},
			check: func(t *testing.T, w *world, orig *structs.Allocation, res *Result) {
				s := findStop(res, orig.ID)
				if s == nil || s.Description != DescNodeNotEligible {
					t.Fatalf("want the alloc stopped as out of scope, got %+v", res.Stops)
				}
				recorded(t, s.Alloc, running)
				if len(res.Places) != 0 {
					t.Fatalf("placed %v", placeNodes(res))
				}
			},
		},
		{
			name: "a reconnected system alloc next to a duplicate on its node keeps exactly one",
			typ:  structs.JobTypeSystem, reported: running,
			setup: func(w *world, orig *structs.Allocation) {
				w.add(0, "n1", running)
			},
			check: func(t *testing.T, w *world, orig *structs.Allocation, res *Result) {
				if len(res.Stops) != 1 || res.Stops[0].Alloc.ID == orig.ID {
					t.Fatalf("want the duplicate stopped and the reconnected alloc kept, got %+v", res.Stops)
				}
				if len(res.Places) != 0 {
					t.Fatalf("placed %v", placeNodes(res))
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, orig := systemReconnectWorld(tc.typ, tc.reported)
			if tc.setup != nil {
				tc.setup(w, orig)
			}
			res := w.system()
			if got := len(res.Buckets["web"].Reconnecting); got != 1 {
				t.Fatalf("%d allocs reconnecting, want 1", got)
			}
			tc.check(t, w, orig, res)
			// Applied, the next evaluation does not reconnect again.
			w.apply(res, func(Placement) string { return "" })
			w.evalID = "eval-1"
			if again := w.system(); len(again.Buckets["web"].Reconnecting) != 0 {
				t.Fatalf("the next evaluation reconnects again: %+v", again.Buckets["web"].Reconnecting.IDs())
			}
		})
	}
}
