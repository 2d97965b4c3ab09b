package scheduler

import (
	"errors"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

func TestNewSchedulerByJobType(t *testing.T) {
	h := NewHarness(t)
	for _, typ := range []string{structs.JobTypeService, structs.JobTypeBatch, structs.JobTypeSystem, structs.JobTypeSysBatch} {
		if _, err := NewScheduler(typ, Config{State: h.snapshot(), Planner: h}); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
	}
	if _, err := NewScheduler("_core", Config{State: h.snapshot(), Planner: h}); !errors.Is(err, ErrUnknownScheduler) {
		t.Fatalf("unknown type: got %v, want ErrUnknownScheduler", err)
	}
}

func TestRegisterPlacesCountAllocations(t *testing.T) {
	h := NewHarness(t)
	h.Nodes(10)
	job := h.Job(serviceJob(10))
	e := h.Run(job, structs.EvalTriggerJobRegister)

	allocs := h.Live(job)
	if len(allocs) != 10 {
		t.Fatalf("placed %d allocs, want 10", len(allocs))
	}
	seen := map[string]bool{}
	for _, a := range allocs {
		if seen[a.Name] {
			t.Fatalf("duplicate name %s", a.Name)
		}
		seen[a.Name] = true
		if a.EvalID != e.ID || a.Metrics == nil || a.AllocatedResources == nil || a.Job == nil {
			t.Fatalf("alloc %s is incomplete: %+v", a.ID, a)
		}
	}
	u := h.LastUpdate(e.ID)
	if u.Status != structs.EvalStatusComplete || u.QueuedAllocations["web"] != 0 || len(u.FailedTGAllocs) != 0 {
		t.Fatalf("eval = %+v", u)
	}
	// Processing the same job again changes nothing.
	n := len(h.Plans)
	h.Run(job, structs.EvalTriggerJobRegister)
	if len(h.Plans) != n {
		t.Fatalf("a second eval submitted a plan")
	}
}

func TestScaleUpAndDown(t *testing.T) {
	h := NewHarness(t)
	h.Nodes(4)
	job := h.Job(serviceJob(3))
	h.Run(job, structs.EvalTriggerJobRegister)

	up := job.Copy()
	up.TaskGroups[0].Count = 5
	job = h.Job(up)
	h.Run(job, structs.EvalTriggerJobRegister)
	if got := len(h.Live(job)); got != 5 {
		t.Fatalf("after scale up: %d live, want 5", got)
	}

	down := job.Copy()
	down.TaskGroups[0].Count = 2
	job = h.Job(down)
	h.Run(job, structs.EvalTriggerJobRegister)
	live := h.Live(job)
	if len(live) != 2 || live[0].Name != job.ID+".web[0]" || live[1].Name != job.ID+".web[1]" {
		t.Fatalf("after scale down: %s", names(live))
	}
	// The survivors were updated in place to the new version.
	for _, a := range live {
		if a.Job.Version != job.Version {
			t.Fatalf("%s runs version %d, want %d", a.Name, a.Job.Version, job.Version)
		}
	}
}

func TestNodeDownMarksLostAndReplaces(t *testing.T) {
	h := NewHarness(t)
	nodes := h.Nodes(3)
	job := h.Job(serviceJob(6))
	h.Run(job, structs.EvalTriggerJobRegister)
	h.ClientAll(job, structs.AllocClientStatusRunning, func(*structs.Allocation) bool { return true })

	down := nodes[0].ID
	onDown := 0
	for _, a := range h.Live(job) {
		if a.NodeID == down {
			onDown++
		}
	}
	if onDown == 0 {
		t.Skip("no alloc landed on the first node")
	}
	h.NodeStatus(down, structs.NodeStatusDown)
	h.Run(job, structs.EvalTriggerNodeUpdate)

	lost := 0
	for _, a := range h.Allocs(job) {
		if a.NodeID == down {
			if a.ClientStatus != structs.AllocClientStatusLost || a.DesiredStatus != structs.AllocDesiredStatusStop {
				t.Fatalf("alloc on down node: %s/%s", a.DesiredStatus, a.ClientStatus)
			}
			if s := a.LastClientStatusState(); s == nil || s.Value != structs.AllocClientStatusLost {
				t.Fatalf("lost alloc has no AllocState entry: %+v", a.AllocStates)
			}
			lost++
		}
	}
	live := h.Live(job)
	if lost != onDown || len(live) != 6 {
		t.Fatalf("lost %d (want %d), live %d (want 6): %s", lost, onDown, len(live), names(live))
	}
	for _, a := range live {
		if a.NodeID == down {
			t.Fatalf("replacement placed on the down node")
		}
		if a.PreviousAllocation != "" {
			prev := h.Alloc(a.PreviousAllocation)
			if prev.NodeID != down || a.RescheduleTracker == nil || len(a.RescheduleTracker.Events) != 1 {
				t.Fatalf("replacement %s: previous %s, tracker %+v", a.Name, prev.NodeID, a.RescheduleTracker)
			}
		}
	}
}

func TestJobStopStopsEverythingIncludingDisconnected(t *testing.T) {
	h := NewHarness(t)
	nodes := h.Nodes(2)
	j := serviceJob(4)
	j.TaskGroups[0].Disconnect = &structs.DisconnectStrategy{LostAfter: time.Hour}
	j.Canonicalize()
	job := h.Job(j)
	h.Run(job, structs.EvalTriggerJobRegister)
	h.ClientAll(job, structs.AllocClientStatusRunning, func(*structs.Allocation) bool { return true })
	h.NodeStatus(nodes[0].ID, structs.NodeStatusDisconnected)
	h.Run(job, structs.EvalTriggerNodeUpdate)

	stop := job.Copy()
	stop.Stop = true
	job = h.Job(stop)
	e := h.Run(job, structs.EvalTriggerJobDeregister)
	if live := h.Live(job); len(live) != 0 {
		t.Fatalf("still live after stop: %s", names(live))
	}
	if h.LastUpdate(e.ID).Status != structs.EvalStatusComplete {
		t.Fatalf("stop eval not complete")
	}
}

func TestBatchCompletedAllocsAreNotReplaced(t *testing.T) {
	h := NewHarness(t)
	h.Nodes(2)
	job := h.Job(batchJob(3))
	h.Run(job, structs.EvalTriggerJobRegister)
	h.ClientAll(job, structs.AllocClientStatusComplete, func(*structs.Allocation) bool { return true })
	n := len(h.Plans)
	h.Run(job, structs.EvalTriggerNodeUpdate)
	if len(h.Plans) != n {
		t.Fatalf("completed batch allocs caused a plan: %+v", h.LastPlan())
	}
	if got := len(h.Allocs(job)); got != 3 {
		t.Fatalf("%d allocs, want 3", got)
	}
}

func TestFailedAllocRescheduleNowAndLater(t *testing.T) {
	h := NewHarness(t)
	h.Nodes(3)
	j := serviceJob(1)
	j.TaskGroups[0].ReschedulePolicy = &structs.ReschedulePolicy{
		Delay: 30 * time.Second, DelayFunction: structs.DelayFunctionExponential, MaxDelay: 5 * time.Minute, Unlimited: true,
	}
	job := h.Job(j)
	h.Run(job, structs.EvalTriggerJobRegister)
	first := h.Live(job)[0]
	h.Client(first, structs.AllocClientStatusRunning)
	h.Client(h.Alloc(first.ID), structs.AllocClientStatusFailed)

	// Right after the failure the delay (30s) has not passed: a follow-up.
	e := h.Run(job, structs.EvalTriggerRetryFailedAlloc)
	followups := h.CreatedBy(structs.EvalTriggerRetryFailedAlloc)
	if len(followups) != 1 || !followups[0].WaitUntil.Equal(h.Now.Add(30*time.Second)) {
		t.Fatalf("want one follow-up in 30s, got %+v", followups)
	}
	if got := h.Alloc(first.ID).FollowupEvalID; got != followups[0].ID {
		t.Fatalf("failed alloc FollowupEvalID = %q, want %q", got, followups[0].ID)
	}
	if h.LastUpdate(e.ID).Status != structs.EvalStatusComplete {
		t.Fatal("eval not complete")
	}

	// The follow-up fires: reschedule now.
	h.Now = h.Now.Add(30 * time.Second)
	h.Process(followups[0])
	live := h.Live(job)
	if len(live) != 1 || live[0].PreviousAllocation != first.ID {
		t.Fatalf("want one replacement of %s, got %s", first.ID, names(live))
	}
	second := live[0]
	if second.NodeID == first.NodeID {
		t.Logf("replacement landed on the node it failed on (penalized, not forbidden)")
	}
	if tr := second.RescheduleTracker; tr == nil || len(tr.Events) != 1 || tr.Events[0].Delay != 30*time.Second {
		t.Fatalf("tracker = %+v", second.RescheduleTracker)
	}
	old := h.Alloc(first.ID)
	if old.DesiredStatus != structs.AllocDesiredStatusStop {
		t.Fatalf("rescheduled alloc not stopped: %s", old.DesiredStatus)
	}

	// The replacement fails too: the exponential delay doubles.
	h.Client(second, structs.AllocClientStatusRunning)
	h.Client(h.Alloc(second.ID), structs.AllocClientStatusFailed)
	h.Run(job, structs.EvalTriggerRetryFailedAlloc)
	followups = h.CreatedBy(structs.EvalTriggerRetryFailedAlloc)
	if len(followups) != 2 || !followups[1].WaitUntil.Equal(h.Now.Add(time.Minute)) {
		t.Fatalf("want a second follow-up in 60s, got %+v", followups)
	}
}

func TestFailedAllocOutOfAttemptsIsNotReplaced(t *testing.T) {
	h := NewHarness(t)
	h.Nodes(2)
	job := h.Job(batchJob(1)) // batch default: 1 attempt in 24h, 5s delay
	h.Run(job, structs.EvalTriggerJobRegister)
	a := h.Live(job)[0]
	h.Client(a, structs.AllocClientStatusFailed)
	h.Now = h.Now.Add(10 * time.Second)
	h.Run(job, structs.EvalTriggerRetryFailedAlloc)
	repl := h.Live(job)
	if len(repl) != 1 || repl[0].PreviousAllocation != a.ID {
		t.Fatalf("first failure: %s", names(h.Allocs(job)))
	}
	h.Client(repl[0], structs.AllocClientStatusFailed)
	h.Now = h.Now.Add(10 * time.Second)
	n := len(h.Plans)
	h.Run(job, structs.EvalTriggerRetryFailedAlloc)
	if len(h.Plans) != n || len(h.Live(job)) != 0 {
		t.Fatalf("second failure was rescheduled: %s", names(h.Allocs(job)))
	}
}

func TestBlockedEvalWhenNoCapacity(t *testing.T) {
	h := NewHarness(t)
	h.Nodes(1)
	j := serviceJob(20) // 500 MHz each on a 3900 MHz node: 7 fit
	job := h.Job(j)
	e := h.Run(job, structs.EvalTriggerJobRegister)

	placed := len(h.Live(job))
	if placed != 7 {
		t.Fatalf("placed %d, want 7", placed)
	}
	u := h.LastUpdate(e.ID)
	if u.Status != structs.EvalStatusComplete || u.QueuedAllocations["web"] != 13 {
		t.Fatalf("eval = %s queued %v", u.Status, u.QueuedAllocations)
	}
	m := u.FailedTGAllocs["web"]
	if m == nil || m.DimensionExhausted["cpu"] == 0 || m.CoalescedFailures != 12 {
		t.Fatalf("failure metrics = %+v", m)
	}
	blocked := h.CreatedBy(structs.EvalTriggerQueuedAllocs)
	if len(blocked) != 1 || blocked[0].Status != structs.EvalStatusBlocked || u.BlockedEval != blocked[0].ID ||
		blocked[0].QueuedAllocations["web"] != 13 || blocked[0].ClassEligibility == nil {
		t.Fatalf("blocked evals = %+v", blocked)
	}

	// Another eval before capacity arrives reuses the one blocked eval.
	h.Run(job, structs.EvalTriggerNodeUpdate)
	if got := len(h.CreatedBy(structs.EvalTriggerQueuedAllocs)); got != 1 {
		t.Fatalf("%d blocked evals for one job", got)
	}

	// The blocked eval itself, still without capacity, is reblocked.
	h.Process(blocked[0])
	if len(h.Reblocked) != 1 || h.Reblocked[0].ID != blocked[0].ID {
		t.Fatalf("blocked eval not reblocked: %+v", h.Reblocked)
	}

	// Capacity arrives: the blocked eval places the rest and completes.
	h.Nodes(2)
	h.Process(blocked[0])
	if got := len(h.Live(job)); got != 20 {
		t.Fatalf("after capacity: %d live, want 20", got)
	}
	if h.LastUpdate(blocked[0].ID).Status != structs.EvalStatusComplete {
		t.Fatal("blocked eval not completed")
	}
}

func TestRefusedPlansAreRetriedThenTheEvalFailsWithAFollowUp(t *testing.T) {
	h := NewHarness(t)
	nodes := h.Nodes(1)
	job := h.Job(serviceJob(2))
	h.Refuse = func(*structs.Plan) []string { return []string{nodes[0].ID} }
	e := h.Run(job, structs.EvalTriggerJobRegister)
	if len(h.Plans) != maxServiceAttempts {
		t.Fatalf("%d plans submitted, want %d", len(h.Plans), maxServiceAttempts)
	}
	u := h.LastUpdate(e.ID)
	f := h.CreatedBy(structs.EvalTriggerMaxPlans)
	if u.Status != structs.EvalStatusFailed || len(f) != 1 || u.NextEval != f[0].ID || !f[0].WaitUntil.After(h.Now) {
		t.Fatalf("eval = %+v, follow-ups %+v", u, f)
	}

	// A batch job gives up after two attempts; one refusal is absorbed.
	h2 := NewHarness(t)
	n2 := h2.Nodes(1)
	bj := h2.Job(batchJob(2))
	refusals := 1
	h2.Refuse = func(*structs.Plan) []string {
		if refusals > 0 {
			refusals--
			return []string{n2[0].ID}
		}
		return nil
	}
	e2 := h2.Run(bj, structs.EvalTriggerJobRegister)
	if h2.LastUpdate(e2.ID).Status != structs.EvalStatusComplete || len(h2.Live(bj)) != 2 || len(h2.Plans) != 2 {
		t.Fatalf("retry after one refusal: status %s, live %d, plans %d", h2.LastUpdate(e2.ID).Status, len(h2.Live(bj)), len(h2.Plans))
	}
}

func TestAnnotatePlanFillsDesiredUpdates(t *testing.T) {
	h := NewHarness(t)
	h.Nodes(2)
	job := h.Job(serviceJob(3))
	e := h.Eval(job, structs.EvalTriggerJobRegister)
	e.AnnotatePlan = true
	h.Process(e)
	p := h.LastPlan()
	if p.Annotations == nil || p.Annotations.DesiredTGUpdates["web"].Place != 3 {
		t.Fatalf("annotations = %+v", p.Annotations)
	}
}

func TestSameEvalOnSameSnapshotGivesTheSamePlan(t *testing.T) {
	h := NewHarness(t)
	h.Nodes(20)
	job := h.Job(serviceJob(15))
	e := h.Eval(job, structs.EvalTriggerJobRegister)
	snap := h.snapshot()
	plan := func() *structs.Plan {
		rec := &recordingPlanner{}
		s, err := NewScheduler(job.Type, Config{State: snap, Planner: rec, Now: h.Now})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Process(e); err != nil {
			t.Fatal(err)
		}
		return rec.plan
	}
	a, b := plan(), plan()
	if !structs.DeepEqual(a, b) {
		t.Fatalf("two runs of one eval differ")
	}
}

// recordingPlanner keeps the plan and commits nothing.
type recordingPlanner struct{ plan *structs.Plan }

func (r *recordingPlanner) SubmitPlan(p *structs.Plan) (*structs.PlanResult, State, error) {
	r.plan = p
	return &structs.PlanResult{NodeAllocation: p.NodeAllocation, NodeUpdate: p.NodeUpdate}, nil, nil
}
func (r *recordingPlanner) UpdateEval(*structs.Evaluation) error  { return nil }
func (r *recordingPlanner) CreateEval(*structs.Evaluation) error  { return nil }
func (r *recordingPlanner) ReblockEval(*structs.Evaluation) error { return nil }
