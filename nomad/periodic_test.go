package nomad

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/nomad/state/statetest"
	"github.com/drover-sched/drover/structs"
)

// periodicEpoch is the fake time the tests start at: 10:07 UTC, eight
// minutes before a quarter-hour launch.
var periodicEpoch = time.Date(2026, 1, 15, 10, 7, 0, 0, time.UTC)

// periodicJob is a batch job with one mock-driver task that launches on
// spec.
func periodicJob(id, spec string) *structs.Job {
	j := itJob(id, 1)
	j.Type = structs.JobTypeBatch
	j.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "1s"}
	j.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: spec, SpecType: periodicSpecCron}
	j.Canonicalize()
	return j
}

// waitArmed waits until d's loop is waiting for the launch at want, so the
// test may advance the fake clock past it. Seeing the loop armed for the
// launch after one also proves the loop finished that one.
func waitArmed(t *testing.T, d *PeriodicDispatch, want time.Time) {
	t.Helper()
	WaitFor(t, 5*time.Second, func() (bool, string) {
		got := armedAt(t, d)
		return got.Equal(want), fmt.Sprintf("dispatcher armed for %s, want %s", got.UTC(), want.UTC())
	})
}

// armedAt returns the launch time d's loop waits for (zero when it waits
// for none), as seen by the timerWatch d must have been given as clock.
func armedAt(t testing.TB, d *PeriodicDispatch) time.Time {
	t.Helper()
	w, ok := d.cfg.Clock.(*timerWatch)
	if !ok {
		t.Fatal("the dispatcher's clock is not a timerWatch")
	}
	at, ok := w.waitingFor()
	if !ok {
		t.Fatal("the dispatcher's loop holds more than one timer")
	}
	return at
}

// childrenOf returns a parent's children in state, oldest first.
func childrenOf(t *testing.T, st *state.StateStore, parentID string) []*structs.Job {
	t.Helper()
	children, err := periodicChildren(st, &structs.Job{Namespace: structs.DefaultNamespace, ID: parentID})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(children, func(i, j int) bool { return children[i].ID < children[j].ID })
	return children
}

// dispatchHarness runs a dispatcher over a real state store, with a
// Register that writes to the store the way the FSM applies the entry.
type dispatchHarness struct {
	clock *clock.Fake
	st    *state.StateStore
	d     *PeriodicDispatch

	mu       sync.Mutex
	index    uint64
	launched []*structs.JobRegisterRequest
}

func newDispatchHarness(t *testing.T, start time.Time, window time.Duration) *dispatchHarness {
	h := &dispatchHarness{clock: clock.NewFake(start), st: statetest.New(t), index: 100}
	h.d = NewPeriodicDispatch(PeriodicDispatchConfig{
		Clock: watchTimers(h.clock), State: func() *state.StateStore { return h.st }, CatchUpWindow: window,
		Register: func(req *structs.JobRegisterRequest) (uint64, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.index++
			h.launched = append(h.launched, req)
			return h.index, h.st.Write(h.index, func(tx *state.Txn) error { return tx.UpsertJobWithEval(req.Job, req.Eval) })
		},
	})
	t.Cleanup(func() { h.d.SetEnabled(false) })
	return h
}

// upsert stores a job as the FSM would and returns the stored copy.
func (h *dispatchHarness) upsert(t *testing.T, j *structs.Job) *structs.Job {
	t.Helper()
	h.mu.Lock()
	h.index++
	idx := h.index
	h.mu.Unlock()
	if err := h.st.Write(idx, func(tx *state.Txn) error { return tx.UpsertJob(j) }); err != nil {
		t.Fatal(err)
	}
	stored, err := h.st.JobByID(nil, j.Namespace, j.ID)
	if err != nil || stored == nil {
		t.Fatalf("job %s not stored: %v", j.ID, err)
	}
	return stored
}

func (h *dispatchHarness) launches() []*structs.JobRegisterRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*structs.JobRegisterRequest(nil), h.launched...)
}

func TestPeriodicDispatchLaunchesOneChildPerTick(t *testing.T) {
	h := newDispatchHarness(t, periodicEpoch, 0)
	h.d.SetEnabled(true)
	parent := periodicJob("report", "*/15 * * * *")
	parent.SubmitTime = periodicEpoch.UnixNano()
	if err := h.d.Add(h.upsert(t, parent)); err != nil {
		t.Fatal(err)
	}
	tick := periodicEpoch.Add(8 * time.Minute)
	waitArmed(t, h.d, tick)
	h.clock.Advance(8 * time.Minute)
	waitArmed(t, h.d, tick.Add(15*time.Minute))

	got := h.launches()
	if len(got) != 1 {
		t.Fatalf("%d launches for one tick", len(got))
	}
	child, eval := got[0].Job, got[0].Eval
	if child.ID != fmt.Sprintf("report/periodic-%d", tick.Unix()) || child.ParentID != "report" || child.Periodic != nil || child.SubmitTime != tick.UnixNano() {
		t.Fatalf("child ID %q ParentID %q Periodic %v SubmitTime %d", child.ID, child.ParentID, child.Periodic, child.SubmitTime)
	}
	if eval == nil || eval.JobID != child.ID || eval.TriggeredBy != structs.EvalTriggerPeriodicJob || eval.Status != structs.EvalStatusPending || eval.ID == "" {
		t.Fatalf("child eval %+v", eval)
	}
	sum, err := h.st.JobSummaryByID(nil, structs.DefaultNamespace, "report")
	if err != nil || sum == nil || sum.Children == nil || sum.Children.Pending != 1 {
		t.Fatalf("parent summary children %+v (%v), want one pending child", sum, err)
	}
}

func TestPeriodicDispatchReadsTheSpecInItsTimeZone(t *testing.T) {
	start := time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)
	h := newDispatchHarness(t, start, 0)
	h.d.SetEnabled(true)
	parent := periodicJob("nightly", "0 3 * * *")
	parent.Periodic.TimeZone = "America/New_York"
	if err := h.d.Add(h.upsert(t, parent)); err != nil {
		t.Fatal(err)
	}
	eightUTC := time.Date(2026, 1, 15, 8, 0, 0, 0, time.UTC)
	waitArmed(t, h.d, eightUTC)
	h.clock.Advance(8 * time.Hour)
	waitArmed(t, h.d, eightUTC.Add(24*time.Hour))
	if got := h.launches(); len(got) != 1 || got[0].Job.ID != fmt.Sprintf("nightly/periodic-%d", eightUTC.Unix()) {
		t.Fatalf("launches %v, want one at 08:00 UTC", got)
	}
}

func TestPeriodicDispatchUntracksStoppedJobsAndReschedulesChangedSpecs(t *testing.T) {
	h := newDispatchHarness(t, periodicEpoch, 0)
	h.d.SetEnabled(true)
	parent := h.upsert(t, periodicJob("report", "*/15 * * * *"))
	if err := h.d.Add(parent); err != nil {
		t.Fatal(err)
	}
	waitArmed(t, h.d, periodicEpoch.Add(8*time.Minute))

	// Re-adding an unchanged job keeps its pending launch.
	if err := h.d.Add(parent); err != nil {
		t.Fatal(err)
	}
	if next, ok := h.d.Tracked("", "report"); !ok || !next.Equal(periodicEpoch.Add(8*time.Minute)) {
		t.Fatalf("unchanged re-add moved the launch to %s (tracked %v)", next, ok)
	}

	stopped := parent.Copy()
	stopped.Stop = true
	if err := h.d.Add(stopped); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.d.Tracked("", "report"); ok {
		t.Fatal("a stopped job is still tracked")
	}
	waitArmed(t, h.d, time.Time{})

	hourly := periodicJob("report", "0 * * * *")
	if err := h.d.Add(h.upsert(t, hourly)); err != nil {
		t.Fatal(err)
	}
	waitArmed(t, h.d, time.Date(2026, 1, 15, 11, 0, 0, 0, time.UTC))

	h.d.Remove("", "report")
	waitArmed(t, h.d, time.Time{})
	h.clock.Advance(2 * time.Hour)
	if n := len(h.launches()); n != 0 {
		t.Fatalf("%d launches of a removed job", n)
	}
}

func TestPeriodicDispatchRefusesAnInvalidSpecAndIgnoresAddsWhileDisabled(t *testing.T) {
	h := newDispatchHarness(t, periodicEpoch, 0)
	if err := h.d.Add(periodicJob("report", "*/15 * * * *")); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.d.Tracked("", "report"); ok {
		t.Fatal("a disabled dispatcher (a follower) tracks a job")
	}
	h.d.SetEnabled(true)
	bad := periodicJob("bad", "*/15 * * * *")
	bad.Periodic.TimeZone = "Nowhere/Special"
	if err := h.d.Add(bad); err == nil {
		t.Fatal("an unknown time zone was accepted")
	}
	if _, ok := h.d.Tracked("", "bad"); ok {
		t.Fatal("an invalid job is tracked")
	}
	if err := h.d.Add(periodicJob("report", "*/15 * * * *")); err != nil {
		t.Fatal(err)
	}
	h.d.SetEnabled(false)
	h.d.SetEnabled(true)
	if _, ok := h.d.Tracked("", "report"); ok {
		t.Fatal("disabling did not forget the tracked jobs")
	}
}

// A new leader launches a launch missed while no leader ran exactly once
// (the newest missed one), counting from the newest child in state, and
// does not catch up launches older than the catch-up window.
func TestPeriodicRestoreLaunchesTheNewestMissedLaunchOnce(t *testing.T) {
	now := time.Date(2026, 1, 15, 11, 7, 0, 0, time.UTC)
	h := newDispatchHarness(t, now, 4*time.Hour)

	missed := periodicJob("report", "*/15 * * * *")
	missed.SubmitTime = now.Add(-2 * time.Hour).UnixNano()
	h.upsert(t, missed)
	lastChild := deriveChild(missed, time.Date(2026, 1, 15, 10, 15, 0, 0, time.UTC))
	h.upsert(t, lastChild)

	current := periodicJob("fresh", "*/15 * * * *")
	current.SubmitTime = now.Add(-time.Minute).UnixNano()
	h.upsert(t, current)

	// Daily at 05:00: that launch is six hours old, beyond the window.
	old := periodicJob("daily", "0 5 * * *")
	old.SubmitTime = now.Add(-7 * 24 * time.Hour).UnixNano()
	h.upsert(t, old)

	h.d.SetEnabled(true)
	if err := h.d.Restore(h.st); err != nil {
		t.Fatal(err)
	}
	waitArmed(t, h.d, time.Date(2026, 1, 15, 11, 15, 0, 0, time.UTC))
	got := h.launches()
	if len(got) != 1 || got[0].Job.ID != fmt.Sprintf("report/periodic-%d", time.Date(2026, 1, 15, 11, 0, 0, 0, time.UTC).Unix()) {
		var ids []string
		for _, r := range got {
			ids = append(ids, r.Job.ID)
		}
		t.Fatalf("catch-up launched %v, want only report's 11:00 launch", ids)
	}
	for _, id := range []string{"report", "fresh", "daily"} {
		if _, ok := h.d.Tracked("", id); !ok {
			t.Fatalf("%s not tracked after restore", id)
		}
	}
}

func TestPeriodicForceRunLaunchesNowAndRefusesUntrackedJobs(t *testing.T) {
	h := newDispatchHarness(t, periodicEpoch, 0)
	if _, err := h.d.ForceRun("", "report"); err == nil {
		t.Fatal("a disabled dispatcher forced a launch")
	}
	h.d.SetEnabled(true)
	parent := periodicJob("report", "0 0 1 1 *")
	parent.Periodic.ProhibitOverlap = true
	if err := h.d.Add(h.upsert(t, parent)); err != nil {
		t.Fatal(err)
	}
	eval, err := h.d.ForceRun("", "report")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("report/periodic-%d", periodicEpoch.Unix())
	if eval.JobID != want || eval.CreateIndex == 0 {
		t.Fatalf("forced eval for %q at index %d, want %q", eval.JobID, eval.CreateIndex, want)
	}
	// Forcing ignores prohibit_overlap, but one second holds one child.
	if _, err := h.d.ForceRun("", "report"); err == nil {
		t.Fatal("two forced launches in one second made two children with one ID")
	}
	h.clock.Advance(time.Second)
	if _, err := h.d.ForceRun("", "report"); err != nil {
		t.Fatalf("forcing while a child runs: %v", err)
	}
	if _, err := h.d.ForceRun("", "other"); err == nil {
		t.Fatal("forced an untracked job")
	}
}
