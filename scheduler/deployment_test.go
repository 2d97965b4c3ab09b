package scheduler

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// rollingJob is serviceJob with an update block: max_parallel, canary.
func rollingJob(count, maxParallel, canary int) *structs.Job {
	j := serviceJob(count)
	j.TaskGroups[0].Update = &structs.UpdateStrategy{
		MaxParallel: maxParallel, Canary: canary, Stagger: 30 * time.Second,
		HealthCheck: structs.UpdateHealthCheckChecks, MinHealthyTime: 10 * time.Second,
		HealthyDeadline: 5 * time.Minute, ProgressDeadline: 10 * time.Minute, AutoRevert: true,
	}
	return j
}

// newVersion registers a destructive change of job (a task env change).
func (h *Harness) newVersion(job *structs.Job, value string) *structs.Job {
	h.t.Helper()
	j := job.Copy()
	j.TaskGroups[0].Tasks[0].Env = map[string]string{"VERSION": value}
	return h.Job(j)
}

// Health reports an alloc's deployment health the way its client would:
// running, and healthy or not as of h.Now.
func (h *Harness) Health(a *structs.Allocation, healthy bool) {
	h.t.Helper()
	u := h.Alloc(a.ID).Copy()
	u.ClientStatus = structs.AllocClientStatusRunning
	u.TaskStates = map[string]*structs.TaskState{"web": {State: structs.TaskStateRunning, StartedAt: h.Now}}
	u.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: structs.BoolPtr(healthy), Timestamp: h.Now}
	if a.DeploymentStatus != nil {
		u.DeploymentStatus.Canary = a.DeploymentStatus.Canary
	}
	if err := h.State.Write(h.next(), func(tx *state.Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{u}) }); err != nil {
		h.t.Fatalf("health report of %s: %v", structs.ShortID(a.ID), err)
	}
}

// HealthAll reports every live alloc of job that has no health yet healthy.
func (h *Harness) HealthAll(job *structs.Job) {
	for _, a := range h.Live(job) {
		if a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil {
			h.Health(a, true)
		}
	}
}

// Deployment returns the job's latest deployment (nil if none).
func (h *Harness) Deployment(job *structs.Job) *structs.Deployment {
	h.t.Helper()
	d, err := h.State.LatestDeploymentByJobID(nil, job.Namespace, job.ID)
	if err != nil {
		h.t.Fatal(err)
	}
	return d
}

// SetDeploymentStatus changes a deployment's status (the watcher's or an
// operator's doing).
func (h *Harness) SetDeploymentStatus(d *structs.Deployment, status string) {
	h.t.Helper()
	err := h.State.Write(h.next(), func(tx *state.Txn) error {
		return tx.UpdateDeploymentStatus(&structs.DeploymentStatusUpdateRequest{
			DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: d.ID, Status: status},
		})
	})

	if err != nil {
		h.t.Fatal(err)
	}
}

// byVersion splits the live allocs of job into those of version v and the
// rest.
func byVersion(allocs []*structs.Allocation, v uint64) (cur, old []*structs.Allocation) {
	for _, a := range allocs {
		if a.Job.Version == v {
			cur = append(cur, a)
		} else {
			old = append(old, a)
		}
	}
	return cur, old
}

// deployed registers job, places it and reports every alloc healthy, so
// the first deployment completes; it returns the stored job.
func deployed(t testT, h *Harness, j *structs.Job) *structs.Job {
	t.Helper()
	job := h.Job(j)
	h.Run(job, structs.EvalTriggerJobRegister)
	h.HealthAll(job)
	h.Run(job, structs.EvalTriggerDeploymentWatcher)
	if d := h.Deployment(job); d == nil || d.Status != structs.DeploymentStatusSuccessful {
		t.Fatalf("first deployment = %+v, want successful", d)
	}
	return job
}

func TestFirstRegistrationCreatesADeploymentAndCompletesIt(t *testing.T) {
	h := NewHarness(t)
	h.Nodes(3)
	job := h.Job(rollingJob(4, 1, 0))
	h.Run(job, structs.EvalTriggerJobRegister)

	plan := h.LastPlan()
	d := plan.Deployment
	if d == nil || d.JobVersion != job.Version || d.JobCreateIndex != job.CreateIndex || d.CreateTime != h.Now.UnixNano() ||
		d.Status != structs.DeploymentStatusRunning {
		t.Fatalf("plan deployment = %+v", d)
	}
	st := d.TaskGroups["web"]
	if st == nil || st.DesiredTotal != 4 || st.DesiredCanaries != 0 || !st.AutoRevert || st.ProgressDeadline != 10*time.Minute {
		t.Fatalf("group state = %+v", st)
	}
	// A first run is not paced: Nomad places the whole count at once and
	// tracks its health under the deployment.
	live := h.Live(job)
	if len(live) != 4 {
		t.Fatalf("live = %s, want 4", names(live))
	}
	for _, a := range live {
		if a.DeploymentID != d.ID || a.DeploymentStatus != nil && a.DeploymentStatus.Canary {
			t.Fatalf("alloc %s deployment %q status %+v", a.Name, a.DeploymentID, a.DeploymentStatus)
		}
	}
	if got := h.Deployment(job).TaskGroups["web"].PlacedAllocs; got != 4 {
		t.Fatalf("state PlacedAllocs = %d, want 4", got)
	}

	// Three healthy of four: not yet complete.
	for _, a := range live[:3] {
		h.Health(a, true)
	}
	h.Run(job, structs.EvalTriggerDeploymentWatcher)
	if got := h.Deployment(job).Status; got != structs.DeploymentStatusRunning {
		t.Fatalf("status with 3/4 healthy = %s", got)
	}
	h.Health(live[3], true)
	h.Run(job, structs.EvalTriggerDeploymentWatcher)
	got := h.Deployment(job)
	if got.Status != structs.DeploymentStatusSuccessful || got.StatusDescription != structs.DeploymentStatusDescriptionSuccessful {
		t.Fatalf("deployment = %s %q, want successful", got.Status, got.StatusDescription)
	}
	if !h.StoredJob(job.Namespace, job.ID).Stable {
		t.Fatal("the deployed version is not marked stable")
	}
}

func TestMaxParallelPacesReplacementsAsHealthArrives(t *testing.T) {
	h := NewHarness(t)
	h.Nodes(3)
	job := deployed(t, h, rollingJob(4, 2, 0))
	first := h.Deployment(job)
	v1 := h.newVersion(job, "1")

	h.Run(v1, structs.EvalTriggerJobRegister)
	d := h.Deployment(v1)
	if d.ID == first.ID || d.JobVersion != v1.Version || d.TaskGroups["web"].DesiredTotal != 4 {
		t.Fatalf("second deployment = %+v", d)
	}
	if len(h.LastPlan().DeploymentUpdates) != 0 {
		t.Fatalf("a completed deployment was updated: %+v", h.LastPlan().DeploymentUpdates)
	}

	for step := 0; ; step++ {
		if step > 10 {
			t.Fatal("rollout did not finish in 10 steps")
		}
		cur, old := byVersion(h.Live(v1), v1.Version)
		waiting := 0
		for _, a := range cur {
			if a.DeploymentID != d.ID {
				t.Fatalf("new alloc %s not in the deployment", a.Name)
			}
			if a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil {
				waiting++
			}
		}
		if waiting > 2 {
			t.Fatalf("step %d: %d new allocs in flight, max_parallel is 2", step, waiting)
		}
		if len(cur)+len(old) != 4 {
			t.Fatalf("step %d: live = %s, want 4", step, names(h.Live(v1)))
		}
		if len(old) == 0 && waiting == 0 {
			break
		}
		// Without health nothing more is placed.
		before := len(h.Allocs(v1))
		h.Run(v1, structs.EvalTriggerRollingUpdate)
		if got := len(h.Allocs(v1)); got != before {
			t.Fatalf("step %d: placed %d without new health", step, got-before)
		}
		// One healthy report frees one slot of the budget.
		cur, _ = byVersion(h.Live(v1), v1.Version)
		for _, a := range cur {
			if a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil {
				h.Health(a, true)
				break
			}
		}
		h.Run(v1, structs.EvalTriggerDeploymentWatcher)
	}
	h.Run(v1, structs.EvalTriggerDeploymentWatcher)
	if got := h.Deployment(v1); got.Status != structs.DeploymentStatusSuccessful {
		t.Fatalf("deployment = %s, want successful", got.Status)
	}
	if got := h.Deployment(v1).TaskGroups["web"].PlacedAllocs; got != 4 {
		t.Fatalf("PlacedAllocs = %d, want 4", got)
	}
}

func TestUnhealthyAllocStopsProgress(t *testing.T) {
	h := NewHarness(t)
	h.Nodes(3)
	job := deployed(t, h, rollingJob(4, 2, 0))
	v1 := h.newVersion(job, "1")
	h.Run(v1, structs.EvalTriggerJobRegister)
	cur, _ := byVersion(h.Live(v1), v1.Version)
	if len(cur) != 2 {
		t.Fatalf("placed %d, want 2", len(cur))
	}
	h.Health(cur[0], true)
	h.Health(cur[1], false)
	before := len(h.Allocs(v1))
	h.Run(v1, structs.EvalTriggerDeploymentWatcher)
	if got := len(h.Allocs(v1)); got != before {
		t.Fatalf("placed %d after an unhealthy report", got-before)
	}
	if got := h.Deployment(v1).Status; got != structs.DeploymentStatusRunning {
		t.Fatalf("status = %s: failing it is the watcher's job", got)
	}
}

func TestCanaryThenPromote(t *testing.T) {
	h := NewHarness(t)
	h.Nodes(3)
	job := deployed(t, h, rollingJob(3, 1, 1))
	v1 := h.newVersion(job, "1")

	h.Run(v1, structs.EvalTriggerJobRegister)
	d := h.Deployment(v1)
	if st := d.TaskGroups["web"]; st.DesiredCanaries != 1 || st.DesiredTotal != 3 || len(st.PlacedCanaries) != 1 {
		t.Fatalf("group state = %+v", st)
	}
	cur, old := byVersion(h.Live(v1), v1.Version)
	if len(cur) != 1 || len(old) != 3 {
		t.Fatalf("live = %s, want 1 canary beside 3 old", names(h.Live(v1)))
	}
	canary := cur[0]
	if canary.DeploymentStatus == nil || !canary.DeploymentStatus.Canary || canary.DeploymentID != d.ID ||
		canary.ID != d.TaskGroups["web"].PlacedCanaries[0] || canary.PreviousAllocation != "" {
		t.Fatalf("canary = %+v", canary)
	}
	if got := h.LastPlan().Annotations; got != nil {
		t.Fatalf("unexpected annotations %+v", got)
	}

	// A healthy canary waits for promotion: nothing more, not complete.
	h.Health(canary, true)
	before := len(h.Allocs(v1))
	h.Run(v1, structs.EvalTriggerDeploymentWatcher)
	if got := len(h.Allocs(v1)); got != before {
		t.Fatalf("placed %d before promotion", got-before)
	}
	if got := h.Deployment(v1).Status; got != structs.DeploymentStatusRunning {
		t.Fatalf("status before promotion = %s", got)
	}
	if len(h.CreatedBy(structs.EvalTriggerRollingUpdate)) != 0 {
		t.Fatal("a rollout waiting for promotion made a rolling follow-up")
	}

	// Promote: the canary takes its namesake's slot, the rest roll one
	// at a time.
	pd := h.Deployment(v1).Copy()
	pd.TaskGroups["web"].Promoted = true
	if err := h.State.Write(h.next(), func(tx *state.Txn) error { return tx.UpsertDeployment(pd) }); err != nil {
		t.Fatal(err)
	}
	h.Run(v1, structs.EvalTriggerDeploymentWatcher)
	cur, old = byVersion(h.Live(v1), v1.Version)
	if len(cur) != 2 || len(old) != 1 {
		t.Fatalf("after promotion live = %s, want 2 new 1 old", names(h.Live(v1)))
	}
	for _, a := range old {
		if a.Name == canary.Name {
			t.Fatalf("the canary's namesake %s still runs", a.Name)
		}
	}
	for {
		h.HealthAll(v1)
		h.Run(v1, structs.EvalTriggerDeploymentWatcher)
		if _, old = byVersion(h.Live(v1), v1.Version); len(old) == 0 {
			break
		}
	}
	h.HealthAll(v1)
	h.Run(v1, structs.EvalTriggerDeploymentWatcher)
	if got := h.Deployment(v1); got.Status != structs.DeploymentStatusSuccessful {
		t.Fatalf("deployment = %s, want successful", got.Status)
	}
	if live := h.Live(v1); len(live) != 3 {
		t.Fatalf("live = %s, want 3", names(live))
	}
}

func TestHaltedDeploymentPlacesNothing(t *testing.T) {
	for _, status := range []string{structs.DeploymentStatusPaused, structs.DeploymentStatusFailed} {
		t.Run(status, func(t *testing.T) {
			h := NewHarness(t)
			h.Nodes(3)
			job := deployed(t, h, rollingJob(4, 1, 0))
			v1 := h.newVersion(job, "1")
			h.Run(v1, structs.EvalTriggerJobRegister)
			cur, _ := byVersion(h.Live(v1), v1.Version)
			h.Health(cur[0], true)
			h.SetDeploymentStatus(h.Deployment(v1), status)
			rolling := len(h.CreatedBy(structs.EvalTriggerRollingUpdate))

			before := len(h.Allocs(v1))
			h.Run(v1, structs.EvalTriggerDeploymentWatcher)
			if got := len(h.Allocs(v1)); got != before {
				t.Fatalf("a %s deployment placed %d", status, got-before)
			}
			if got := len(h.CreatedBy(structs.EvalTriggerRollingUpdate)); got != rolling {
				t.Fatalf("a %s deployment made a rolling follow-up", status)
			}
			if status != structs.DeploymentStatusPaused {
				return
			}
			h.SetDeploymentStatus(h.Deployment(v1), structs.DeploymentStatusRunning)
			h.Run(v1, structs.EvalTriggerDeploymentWatcher)
			if cur, _ := byVersion(h.Live(v1), v1.Version); len(cur) != 2 {
				t.Fatalf("after resume %d new allocs, want 2", len(cur))
			}
		})
	}
}

func TestNewVersionCancelsTheOlderDeployment(t *testing.T) {
	h := NewHarness(t)
	h.Nodes(3)
	job := deployed(t, h, rollingJob(4, 1, 0))
	v1 := h.newVersion(job, "1")
	h.Run(v1, structs.EvalTriggerJobRegister)
	d1 := h.Deployment(v1)

	v2 := h.newVersion(v1, "2")
	h.Run(v2, structs.EvalTriggerJobRegister)
	plan := h.LastPlan()
	if len(plan.DeploymentUpdates) != 1 || plan.DeploymentUpdates[0].DeploymentID != d1.ID ||
		plan.DeploymentUpdates[0].Status != structs.DeploymentStatusCancelled ||
		plan.DeploymentUpdates[0].StatusDescription != "Cancelled due to newer version of job" {
		t.Fatalf("deployment updates = %+v", plan.DeploymentUpdates)
	}
	if plan.Deployment == nil || plan.Deployment.JobVersion != v2.Version {
		t.Fatalf("plan deployment = %+v, want one for version %d", plan.Deployment, v2.Version)
	}
	stored, _ := h.State.DeploymentByID(nil, d1.ID)
	if stored.Status != structs.DeploymentStatusCancelled {
		t.Fatalf("old deployment = %s", stored.Status)
	}
}

func TestStoppingTheJobCancelsItsDeployment(t *testing.T) {
	h := NewHarness(t)
	h.Nodes(3)
	job := deployed(t, h, rollingJob(2, 1, 0))
	v1 := h.newVersion(job, "1")
	h.Run(v1, structs.EvalTriggerJobRegister)
	d1 := h.Deployment(v1)
	stop := v1.Copy()
	stop.Stop = true
	stopped := h.Job(stop)
	h.Run(stopped, structs.EvalTriggerJobDeregister)
	got, _ := h.State.DeploymentByID(nil, d1.ID)
	if got.Status != structs.DeploymentStatusCancelled || got.StatusDescription != structs.DeploymentStatusDescriptionStoppedJob {
		t.Fatalf("deployment = %s %q", got.Status, got.StatusDescription)
	}
	if d := h.LastPlan().Deployment; d != nil {
		t.Fatalf("a stopped job got a deployment %+v", d)
	}
}

func TestRescheduledCanaryStaysACanary(t *testing.T) {
	h := NewHarness(t)
	h.Nodes(3)
	j := rollingJob(3, 1, 1)
	j.TaskGroups[0].ReschedulePolicy = &structs.ReschedulePolicy{Delay: 0, DelayFunction: structs.DelayFunctionConstant, Unlimited: true}
	job := deployed(t, h, j)
	v1 := h.newVersion(job, "1")
	h.Run(v1, structs.EvalTriggerJobRegister)
	cur, _ := byVersion(h.Live(v1), v1.Version)
	canary := cur[0]
	h.Client(canary, structs.AllocClientStatusRunning)
	h.Client(h.Alloc(canary.ID), structs.AllocClientStatusFailed)

	h.Run(v1, structs.EvalTriggerRetryFailedAlloc)
	cur, old := byVersion(h.Live(v1), v1.Version)
	if len(cur) != 1 || len(old) != 3 {
		t.Fatalf("live = %s, want the canary's replacement beside 3 old", names(h.Live(v1)))
	}
	repl := cur[0]
	if repl.PreviousAllocation != canary.ID || repl.DeploymentStatus == nil || !repl.DeploymentStatus.Canary ||
		repl.Name != canary.Name {
		t.Fatalf("replacement = %s prev %s status %+v", repl.Name, repl.PreviousAllocation, repl.DeploymentStatus)
	}
	st := h.Deployment(v1).TaskGroups["web"]
	if len(st.PlacedCanaries) != 2 || st.PlacedCanaries[1] != repl.ID {
		t.Fatalf("PlacedCanaries = %v, want the replacement added", st.PlacedCanaries)
	}
}

func TestLostAllocDuringADeploymentIsReplacedUnderIt(t *testing.T) {
	h := NewHarness(t)
	nodes := h.Nodes(2)
	job := deployed(t, h, rollingJob(4, 1, 0))
	v1 := h.newVersion(job, "1")
	h.Run(v1, structs.EvalTriggerJobRegister)
	d := h.Deployment(v1)
	// Take down a node holding an old alloc.
	_, old := byVersion(h.Live(v1), v1.Version)
	down := old[0].NodeID
	h.NodeStatus(down, structs.NodeStatusDown)
	h.Run(v1, structs.EvalTriggerNodeUpdate)
	var up string
	for _, n := range nodes {
		if n.ID != down {
			up = n.ID
		}
	}
	for _, a := range h.Live(v1) {
		if a.NodeID != up {
			t.Fatalf("alloc %s still live on the down node", a.Name)
		}
		if a.PreviousAllocation != "" && a.Job.Version == v1.Version && a.DeploymentID != d.ID {
			t.Fatalf("replacement %s placed outside the deployment (%q)", a.Name, a.DeploymentID)
		}
	}
	if len(h.Live(v1)) != 4 {
		t.Fatalf("live = %s, want 4", names(h.Live(v1)))
	}
}

func TestReconnectDuringADeploymentKeepsItsHealth(t *testing.T) {
	h := NewHarness(t)
	h.Nodes(2)
	j := rollingJob(2, 1, 0)
	j.TaskGroups[0].Disconnect = &structs.DisconnectStrategy{LostAfter: time.Hour, Replace: structs.BoolPtr(false)}
	j.TaskGroups[0].Disconnect.Canonicalize()
	job := deployed(t, h, j)
	v1 := h.newVersion(job, "1")
	h.Run(v1, structs.EvalTriggerJobRegister)
	d := h.Deployment(v1)
	cur, _ := byVersion(h.Live(v1), v1.Version)
	fresh := cur[0]
	h.Health(fresh, true)

	// Its node disconnects: the alloc is unknown, which is not unhealthy.
	h.NodeStatus(fresh.NodeID, structs.NodeStatusDisconnected)
	h.Now = h.Now.Add(time.Minute)
	h.Run(v1, structs.EvalTriggerNodeUpdate)
	if got := h.Alloc(fresh.ID); got.ClientStatus != structs.AllocClientStatusUnknown {
		t.Fatalf("alloc = %s, want unknown", got.ClientStatus)
	}
	if got := h.Deployment(v1); got.Status != structs.DeploymentStatusRunning || got.TaskGroups["web"].UnhealthyAllocs != 0 {
		t.Fatalf("deployment = %s %+v", got.Status, got.TaskGroups["web"])
	}

	// It comes back: heartbeat, then the client's report, then the
	// reconnect eval. It keeps its health and its deployment.
	h.Now = h.Now.Add(time.Minute)
	h.NodeStatus(fresh.NodeID, structs.NodeStatusReady)
	for _, a := range h.Live(v1) {
		if a.ClientStatus == structs.AllocClientStatusUnknown {
			h.Client(a, structs.AllocClientStatusRunning)
		}
	}
	h.Run(v1, structs.EvalTriggerReconnect)
	got := h.Alloc(fresh.ID)
	if got.DesiredStatus != structs.AllocDesiredStatusRun || got.DeploymentID != d.ID ||
		got.DeploymentStatus == nil || got.DeploymentStatus.Healthy == nil || !*got.DeploymentStatus.Healthy {
		t.Fatalf("reconnected alloc = %s deployment %q status %+v", got.DesiredStatus, got.DeploymentID, got.DeploymentStatus)
	}
	// The rollout goes on to completion.
	for i := 0; i < 5; i++ {
		h.HealthAll(v1)
		h.Run(v1, structs.EvalTriggerDeploymentWatcher)
	}
	if got := h.Deployment(v1); got.Status != structs.DeploymentStatusSuccessful {
		t.Fatalf("deployment = %s, want successful; live %s", got.Status, names(h.Live(v1)))
	}
}

func TestNoDeploymentWithoutAnUpdateBlockOrForBatch(t *testing.T) {
	cases := map[string]*structs.Job{
		"service without update": serviceJob(3),
		"batch with update": func() *structs.Job {
			j := batchJob(3)
			j.TaskGroups[0].Update = rollingJob(3, 1, 0).TaskGroups[0].Update
			return j
		}(),
	}
	for name, j := range cases {
		t.Run(name, func(t *testing.T) {
			h := NewHarness(t)
			h.Nodes(2)
			job := h.Job(j)
			h.Run(job, structs.EvalTriggerJobRegister)
			if d := h.Deployment(job); d != nil {
				t.Fatalf("deployment %+v", d)
			}
			for _, a := range h.Live(job) {
				if a.DeploymentID != "" {
					t.Fatalf("alloc %s in deployment %q", a.Name, a.DeploymentID)
				}
			}
			if len(h.Live(job)) != 3 {
				t.Fatalf("live = %s", names(h.Live(job)))
			}
		})
	}
}

func TestInPlaceUpdateMakesNoDeployment(t *testing.T) {
	h := NewHarness(t)
	h.Nodes(2)
	job := deployed(t, h, rollingJob(3, 1, 0))
	first := h.Deployment(job)
	j := job.Copy()
	j.Meta = map[string]string{"owner": "ops"}
	v1 := h.Job(j)
	if v1.Version == job.Version {
		t.Fatal("the meta change made no new version")
	}
	h.Run(v1, structs.EvalTriggerJobRegister)
	if d := h.Deployment(v1); d.ID != first.ID {
		t.Fatalf("an in-place update created deployment %+v", d)
	}
	for _, a := range h.Live(v1) {
		if a.Job.Version != v1.Version {
			t.Fatalf("alloc %s not updated in place", a.Name)
		}
	}
}
