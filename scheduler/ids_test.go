package scheduler

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

// An eval scheduled a second time (a blocked eval reblocked and unblocked,
// an eval nacked after its plan committed and delivered again) must make
// new IDs. Seeded by the eval ID alone, the second run drew the first
// run's IDs again: its replacement for a failed alloc took the failed
// alloc's own ID, and the plan overwrote the alloc it replaced.
func TestAnEvalScheduledAgainMakesNewIDs(t *testing.T) {
	for _, seed := range []int64{0, 42} { // 0: from the eval and the snapshot; 42: one fixed stream
		h := NewHarness(t)
		h.Seed = seed
		h.Nodes(2)
		job := h.Job(serviceJob(1))
		e := h.Run(job, structs.EvalTriggerJobRegister)
		first := h.Allocs(job)
		if len(first) != 1 {
			t.Fatalf("seed %d: %d allocs placed, want 1", seed, len(first))
		}
		h.Client(first[0], structs.AllocClientStatusFailed)
		h.Now = h.Now.Add(24 * 60 * 60 * 1e9) // past any reschedule delay

		// The same eval again, as the broker would deliver it.
		again, err := h.State.EvalByID(nil, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		again = again.Copy()
		again.Status = structs.EvalStatusPending
		h.Process(again) // fails the test if the plan does not apply

		ids := map[string]string{}
		live := 0
		for _, a := range h.Allocs(job) {
			if prev, dup := ids[a.ID]; dup {
				t.Fatalf("seed %d: %s and %s share the ID %s", seed, prev, a.Name, a.ID)
			}
			ids[a.ID] = a.Name
			if !a.TerminalStatus() {
				live++
			}
		}
		if len(ids) != 2 || live != 1 {
			t.Fatalf("seed %d: allocs %s; want the failed one and one replacement with a new ID", seed, names(h.Allocs(job)))
		}
		if a, _ := h.State.AllocByID(nil, first[0].ID); a.ClientStatus != structs.AllocClientStatusFailed || a.NodeID != first[0].NodeID {
			t.Fatalf("seed %d: the failed alloc was overwritten: %s on %s", seed, a.ClientStatus, a.NodeID)
		}
	}
}

// With a configured seed every eval replays one ID stream: a second eval
// walks past all the IDs the first one stored, however many.
func TestAFixedSeedNeverHandsOutAStoredID(t *testing.T) {
	h := NewHarness(t)
	h.Seed = 42
	h.Nodes(40)
	job := h.Job(serviceJob(100))
	h.Run(job, structs.EvalTriggerJobRegister)
	if n := len(h.Allocs(job)); n != 100 {
		t.Fatalf("%d allocs placed, want 100", n)
	}
	up := job.Copy()
	up.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"} // destructive: 100 new allocs
	job = h.Job(up)
	h.Run(job, structs.EvalTriggerJobRegister) // fails the test if the plan does not apply
	seen := map[string]bool{}
	for _, a := range h.Allocs(job) {
		if seen[a.ID] {
			t.Fatalf("two allocs share the ID %s", a.ID)
		}
		seen[a.ID] = true
	}
	if len(seen) != 200 {
		t.Fatalf("%d allocs after a destructive update of 100; want the 100 old ones and 100 new ones", len(seen))
	}
}

// The same eval on the same snapshot still makes the same IDs: a
// post-mortem replays it.
func TestTheSameEvalOnTheSameSnapshotReplays(t *testing.T) {
	a, b := seedFor(0, "e1", 7), seedFor(0, "e1", 7)
	if a != b {
		t.Fatalf("seeds %d and %d for the same eval and index", a, b)
	}
	if seedFor(0, "e1", 8) == a || seedFor(0, "e2", 7) == a {
		t.Fatal("another index or another eval must seed differently")
	}
	if seedFor(5, "e1", 7) != 5 {
		t.Fatal("a configured seed is used as it is")
	}
	taken := map[string]bool{}
	first := newIDGenerator(1, nil).next()
	taken[first] = true
	if next := newIDGenerator(1, func(id string) bool { return taken[id] }).next(); next == first {
		t.Fatalf("next returned the taken ID %s", next)
	}
}
