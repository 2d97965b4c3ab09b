package deploymentwatcher

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/nomad/state/statetest"
	"github.com/drover-sched/drover/structs"
)

// watcherHarness runs the deployment watcher over a real in-memory state
// store and the fake clock. It is the watcher's Raft: its writes go to the
// store directly, one index each, as the FSM would apply them; raft itself
// is not what these tests are about.
type watcherHarness struct {
	t     testing.TB
	st    *state.StateStore
	clock *clock.Fake
	w     *Watcher

	mu    sync.Mutex
	index uint64
	ids   int
}

var watchT0 = time.Unix(1700000000, 0).UTC()

func newWatcherHarness(t testing.TB) *watcherHarness {
	h := &watcherHarness{t: t, st: statetest.New(t), clock: clock.NewFake(watchT0), index: 100}
	h.w = New(h.config(h))
	return h
}

func (h *watcherHarness) newID() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ids++
	return fmt.Sprintf("eval-%03d", h.ids)
}

func (h *watcherHarness) next() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.index++
	return h.index
}

// config is the watcher's configuration over the harness's store and
// clock, with raft as its writer.
func (h *watcherHarness) config(raft Raft) Config {
	return Config{State: func() State { return h.st }, Raft: raft, Clock: h.clock, NewID: h.newID}
}

func (h *watcherHarness) ApplyDeploymentStatus(req *structs.DeploymentStatusUpdateRequest) error {
	return h.st.Write(h.next(), func(tx *state.Txn) error { return tx.UpdateDeploymentStatus(req) })
}

func (h *watcherHarness) ApplyDeploymentPromotion(req *structs.DeploymentPromoteRequest) error {
	return h.st.Write(h.next(), func(tx *state.Txn) error { return tx.UpdateDeploymentPromotion(req) })
}

func (h *watcherHarness) UpsertEvals(evals []*structs.Evaluation) error {
	return h.st.Write(h.next(), func(tx *state.Txn) error { return tx.UpsertEvals(evals) })
}

func (h *watcherHarness) must(err error) {
	h.t.Helper()
	if err != nil {
		h.t.Fatal(err)
	}
}

// watcherJob is a one-group service job ("web", one raw_exec task running
// /bin/sleep) with an update block.
func watcherJob(id string, count int, update *structs.UpdateStrategy) *structs.Job {
	j := &structs.Job{ID: id, Type: structs.JobTypeService, TaskGroups: []*structs.TaskGroup{{
		Name: "web", Count: 1,
		Tasks: []*structs.Task{{Name: "t", Driver: "raw_exec", Config: map[string]any{"command": "/bin/sleep", "args": []any{"60"}},
			Resources: &structs.Resources{CPU: 100, MemoryMB: 64}}},
	}}}
	j.Canonicalize()
	// Set after Canonicalize, so that the group keeps exactly the count
	// and update block the test gives it.
	j.TaskGroups[0].Count = count
	j.TaskGroups[0].Update = update
	return j
}

// watcherAlloc is a running alloc of job's group "web" on node n1.
func watcherAlloc(id string, job *structs.Job, index int, deploymentID string) *structs.Allocation {
	return &structs.Allocation{
		ID: id, Namespace: job.Namespace, EvalID: "e-place", Name: structs.AllocName(job.ID, "web", index), NodeID: "n1",
		JobID: job.ID, Job: job, TaskGroup: "web", DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus:       structs.AllocClientStatusRunning,
		AllocatedResources: structs.AllocatedResourcesFor(job.TaskGroups[0], nil),
		CreateTime:         1000, ModifyTime: 1000, DeploymentID: deploymentID,
	}
}

// register stores job (a new version if it changed) and returns it.
func (h *watcherHarness) register(job *structs.Job) *structs.Job {
	h.t.Helper()
	h.must(h.st.Write(h.next(), func(tx *state.Txn) error { return tx.UpsertJob(job) }))
	stored, err := h.st.JobByID(nil, job.Namespace, job.ID)
	h.must(err)
	return stored
}

// deploy places a deployment of the stored job's current version with n
// allocs (the first canaries of them canaries), through a plan as the
// scheduler would, at the fake clock's time.
func (h *watcherHarness) deploy(jobID, depID string, n, canaries int, ds structs.DeploymentState) []string {
	h.t.Helper()
	job, err := h.st.JobByID(nil, structs.DefaultNamespace, jobID)
	h.must(err)
	ds.DesiredTotal, ds.DesiredCanaries = n, canaries
	var allocs []*structs.Allocation
	var ids []string
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%s-a%d", depID, i)
		a := watcherAlloc(id, job, i, depID)
		if i < canaries {
			a.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
		}
		allocs = append(allocs, a)
		ids = append(ids, id)
	}
	h.must(h.st.Write(h.next(), func(tx *state.Txn) error {
		return tx.UpsertPlanResults(&structs.ApplyPlanResultsRequest{
			AllocsUpdated: allocs, Job: job, UpdatedAt: h.clock.Now().UnixNano(),
			Deployment: &structs.Deployment{ID: depID, Namespace: structs.DefaultNamespace, JobID: jobID,
				JobVersion: job.Version, JobCreateIndex: job.CreateIndex, Status: structs.DeploymentStatusRunning,
				TaskGroups: map[string]*structs.DeploymentState{"web": &ds}},
		})
	}))
	return ids
}

// health reports allocs healthy or not, as their client would, at the
// fake clock's time.
func (h *watcherHarness) health(healthy bool, ids ...string) {
	h.t.Helper()
	var ups []*structs.Allocation
	for _, id := range ids {
		ups = append(ups, &structs.Allocation{ID: id, ClientStatus: structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: structs.BoolPtr(healthy), Timestamp: h.clock.Now()}})
	}
	h.must(h.st.Write(h.next(), func(tx *state.Txn) error { return tx.UpdateAllocsFromClient(ups) }))
}

func (h *watcherHarness) setStatus(depID, status string) {
	h.t.Helper()
	h.must(h.st.Write(h.next(), func(tx *state.Txn) error {
		return tx.UpdateDeploymentStatus(&structs.DeploymentStatusUpdateRequest{
			DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: depID, Status: status}})
	}))
}

// pass runs one watcher pass and then writes its batched evals.
func (h *watcherHarness) pass() time.Time {
	h.t.Helper()
	next, err := h.w.pass(memdb.NewWatchSet())
	h.must(err)
	h.w.flush()
	return next
}

func (h *watcherHarness) deployment(id string) *structs.Deployment {
	h.t.Helper()
	d, err := h.st.DeploymentByID(nil, id)
	h.must(err)
	if d == nil {
		h.t.Fatalf("deployment %s is gone", id)
	}
	return d
}

func (h *watcherHarness) watcherEvals(jobID string) []*structs.Evaluation {
	h.t.Helper()
	evals, err := h.st.EvalsByJob(nil, structs.DefaultNamespace, jobID)
	h.must(err)
	var out []*structs.Evaluation
	for _, e := range evals {
		if e.TriggeredBy == structs.EvalTriggerDeploymentWatcher {
			out = append(out, e)
		}
	}
	return out
}

func (h *watcherHarness) wantStatus(depID, status, desc string) {
	h.t.Helper()
	d := h.deployment(depID)
	if d.Status != status || d.StatusDescription != desc {
		h.t.Fatalf("deployment %s is %s (%q), want %s (%q)", depID, d.Status, d.StatusDescription, status, desc)
	}
}

var rolling = structs.DeploymentState{ProgressDeadline: 10 * time.Minute}

func TestAnUnhealthyAllocFailsItsDeployment(t *testing.T) {
	h := newWatcherHarness(t)
	h.register(watcherJob("web", 3, nil))
	ids := h.deploy("web", "d1", 3, 0, rolling)
	h.pass()
	h.health(true, ids[0])
	h.health(false, ids[1])
	h.pass()
	h.wantStatus("d1", structs.DeploymentStatusFailed, structs.DeploymentStatusDescriptionFailedAllocations)
	if job, _ := h.st.JobByID(nil, "default", "web"); job.Version != 0 {
		t.Fatalf("a deployment without auto_revert changed the job to version %d", job.Version)
	}
	evals := h.watcherEvals("web")
	last := evals[len(evals)-1]
	if last.DeploymentID != "d1" || last.Status != structs.EvalStatusPending || last.CreateTime != watchT0.UnixNano() {
		t.Fatalf("the failure's eval = %+v", last)
	}
}

func TestAnUnknownAllocIsNotCountedUnhealthy(t *testing.T) {
	h := newWatcherHarness(t)
	h.register(watcherJob("web", 2, nil))
	ids := h.deploy("web", "d1", 2, 0, rolling)
	h.health(false, ids[0])
	// The servers mark the alloc unknown (its node disconnected) after its
	// client's last word was "unhealthy".
	a, _ := h.st.AllocByID(nil, ids[0])
	unknown := a.Copy()
	unknown.ClientStatus = structs.AllocClientStatusUnknown
	h.must(h.st.Write(h.next(), func(tx *state.Txn) error {
		return tx.UpsertPlanResults(&structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{unknown}, Job: a.Job})
	}))
	if got, _ := h.st.AllocByID(nil, ids[0]); got.ClientStatus != structs.AllocClientStatusUnknown {
		t.Fatalf("alloc is %s, want unknown", got.ClientStatus)
	}
	h.pass()
	h.wantStatus("d1", structs.DeploymentStatusRunning, "")
}

func TestTheProgressDeadlineFailsADeploymentThatStopsMakingProgress(t *testing.T) {
	h := newWatcherHarness(t)
	h.register(watcherJob("web", 2, nil))
	ids := h.deploy("web", "d1", 2, 0, rolling)
	if next := h.pass(); !next.Equal(watchT0.Add(10 * time.Minute)) {
		t.Fatalf("next deadline = %v, want the deployment's creation plus 10m", next)
	}
	h.clock.Advance(5 * time.Minute)
	h.health(true, ids[0]) // progress: the deadline moves to now + 10m
	if next := h.pass(); !next.Equal(watchT0.Add(15 * time.Minute)) {
		t.Fatalf("next deadline after a healthy alloc = %v, want T0+15m", next)
	}
	h.clock.Advance(9*time.Minute + 59*time.Second)
	h.pass()
	h.wantStatus("d1", structs.DeploymentStatusRunning, "")
	h.clock.Advance(time.Second)
	h.pass()
	h.wantStatus("d1", structs.DeploymentStatusFailed, structs.DeploymentStatusDescriptionProgressDeadline)
}

// stableThenBroken registers web version 0 and deploys it successfully,
// then registers a changed version 1 and deploys it as d1 with auto_revert.
func stableThenBroken(h *watcherHarness, autoRevert bool) []string {
	h.t.Helper()
	h.register(watcherJob("web", 2, nil))
	ids := h.deploy("web", "d0", 2, 0, rolling)
	h.health(true, ids...)
	h.setStatus("d0", structs.DeploymentStatusSuccessful)
	broken := watcherJob("web", 2, nil)
	broken.TaskGroups[0].Tasks[0].Config = map[string]any{"command": "/bin/false"}
	if v := h.register(broken); v.Version != 1 {
		h.t.Fatalf("changed job is version %d, want 1", v.Version)
	}
	ds := rolling
	ds.AutoRevert = autoRevert
	return h.deploy("web", "d1", 2, 0, ds)
}

func TestAutoRevertRegistersTheLastStableVersionAgain(t *testing.T) {
	h := newWatcherHarness(t)
	ids := stableThenBroken(h, true)
	h.health(false, ids[0])
	h.pass()
	h.wantStatus("d1", structs.DeploymentStatusFailed, "Failed due to unhealthy allocations - rolling back to job version 0")
	job, _ := h.st.JobByID(nil, "default", "web")
	if job.Version != 2 || job.TaskGroups[0].Tasks[0].Config["command"] != "/bin/sleep" || job.Stable {
		t.Fatalf("after the revert the job is version %d running %v (stable %t); want version 2 with version 0's spec, not yet stable",
			job.Version, job.TaskGroups[0].Tasks[0].Config["command"], job.Stable)
	}
	evals := h.watcherEvals("web")
	if len(evals) == 0 || evals[len(evals)-1].DeploymentID != "d1" {
		t.Fatalf("no eval came with the revert: %v", evals)
	}
}

func TestAutoRevertSaysSoWhenNoVersionIsStable(t *testing.T) {
	h := newWatcherHarness(t)
	h.register(watcherJob("web", 1, nil))
	ds := rolling
	ds.AutoRevert = true
	ids := h.deploy("web", "d1", 1, 0, ds)
	h.health(false, ids...)
	h.pass()
	h.wantStatus("d1", structs.DeploymentStatusFailed, "Failed due to unhealthy allocations - no stable job version to auto revert to")
	if job, _ := h.st.JobByID(nil, "default", "web"); job.Version != 0 {
		t.Fatalf("job changed to version %d with nothing to revert to", job.Version)
	}
}

func TestWithoutAutoRevertAFailureKeepsTheBrokenVersion(t *testing.T) {
	h := newWatcherHarness(t)
	ids := stableThenBroken(h, false)
	h.health(false, ids[0])
	h.pass()
	h.wantStatus("d1", structs.DeploymentStatusFailed, structs.DeploymentStatusDescriptionFailedAllocations)
	if job, _ := h.st.JobByID(nil, "default", "web"); job.Version != 1 {
		t.Fatalf("job is version %d, want 1", job.Version)
	}
}

func TestAutoPromoteWaitsForEveryCanary(t *testing.T) {
	h := newWatcherHarness(t)
	h.register(watcherJob("web", 3, nil))
	ds := rolling
	ds.AutoPromote = true
	ids := h.deploy("web", "d1", 3, 2, ds)
	h.health(true, ids[0])
	h.pass()
	if h.deployment("d1").TaskGroups["web"].Promoted {
		t.Fatal("promoted with one of two canaries healthy")
	}
	h.health(true, ids[1])
	h.pass()
	d := h.deployment("d1")
	if !d.TaskGroups["web"].Promoted || d.Status != structs.DeploymentStatusRunning {
		t.Fatalf("after both canaries turned healthy: promoted %t, status %s", d.TaskGroups["web"].Promoted, d.Status)
	}
	evals := h.watcherEvals("web")
	if len(evals) == 0 || evals[len(evals)-1].DeploymentID != "d1" {
		t.Fatal("promotion wrote no eval")
	}
}

func TestCanariesWithoutAutoPromoteWaitForAPersonPastTheDeadline(t *testing.T) {
	h := newWatcherHarness(t)
	h.register(watcherJob("web", 3, nil))
	ids := h.deploy("web", "d1", 3, 1, rolling)
	h.health(true, ids[0])
	if next := h.pass(); !next.IsZero() {
		t.Fatalf("a group waiting for promotion has a deadline %v", next)
	}
	h.clock.Advance(time.Hour)
	h.pass()
	d := h.deployment("d1")
	if d.TaskGroups["web"].Promoted || d.Status != structs.DeploymentStatusRunning {
		t.Fatalf("without auto_promote: promoted %t, status %s; want waiting", d.TaskGroups["web"].Promoted, d.Status)
	}
}

func TestAPausedDeploymentWaitsUntilResumed(t *testing.T) {
	h := newWatcherHarness(t)
	h.register(watcherJob("web", 2, nil))
	ids := h.deploy("web", "d1", 2, 0, rolling)
	h.setStatus("d1", structs.DeploymentStatusPaused)
	h.health(false, ids[0])
	h.clock.Advance(time.Hour)
	if next := h.pass(); !next.IsZero() {
		t.Fatalf("a paused deployment has a deadline %v", next)
	}
	if d := h.deployment("d1"); d.Status != structs.DeploymentStatusPaused {
		t.Fatalf("paused deployment became %s", d.Status)
	}
	if evals := h.watcherEvals("web"); len(evals) != 0 {
		t.Fatalf("a paused deployment got %d evals", len(evals))
	}
	h.setStatus("d1", structs.DeploymentStatusRunning)
	h.pass()
	h.wantStatus("d1", structs.DeploymentStatusFailed, structs.DeploymentStatusDescriptionFailedAllocations)
}

func TestManualHealthDrivesTheWatcher(t *testing.T) {
	h := newWatcherHarness(t)
	h.register(watcherJob("web", 2, nil))
	ids := h.deploy("web", "d1", 2, 0, rolling)
	h.must(h.st.Write(h.next(), func(tx *state.Txn) error {
		return tx.UpdateDeploymentAllocHealth(&structs.ApplyDeploymentAllocHealthRequest{
			DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: "d1", HealthyAllocationIDs: ids[:1]},
			Timestamp:                    h.clock.Now().UnixNano()})
	}))
	h.pass()
	if n := len(h.watcherEvals("web")); n != 1 {
		t.Fatalf("%d evals after a healthy verdict, want 1", n)
	}
	h.must(h.st.Write(h.next(), func(tx *state.Txn) error {
		return tx.UpdateDeploymentAllocHealth(&structs.ApplyDeploymentAllocHealthRequest{
			DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: "d1", UnhealthyAllocationIDs: ids[1:]},
			Timestamp:                    h.clock.Now().UnixNano()})
	}))
	h.pass()
	h.wantStatus("d1", structs.DeploymentStatusFailed, structs.DeploymentStatusDescriptionFailedAllocations)
}

func TestHealthChangesWithinABatchCostOneEval(t *testing.T) {
	h := newWatcherHarness(t)
	h.register(watcherJob("web", 4, nil))
	ids := h.deploy("web", "d1", 4, 0, rolling)
	for _, id := range ids {
		h.health(true, id)
		if _, err := h.w.pass(memdb.NewWatchSet()); err != nil {
			t.Fatal(err)
		}
	}
	h.w.flush()
	if evals := h.watcherEvals("web"); len(evals) != 1 {
		t.Fatalf("%d evals for four health changes in one batch, want 1", len(evals))
	}
	// Nothing changed since: the next pass asks for nothing.
	h.pass()
	if evals := h.watcherEvals("web"); len(evals) != 1 {
		t.Fatalf("%d evals after a pass with no change, want still 1", len(evals))
	}
}

// runWatcher runs a watcher loop until the test ends or stop is called.
func (h *watcherHarness) runWatcher() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	w := New(h.config(h))
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	h.t.Cleanup(stop)
	return stop
}

// waitFor polls cond, with a deadline, moving the fake clock on by step
// before each look, so that a watcher loop blocked on its batch or
// deadline timers goes on. It returns the fake time at which cond held.
func (h *watcherHarness) waitFor(what string, step time.Duration, cond func() bool) time.Time {
	h.t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		if cond() {
			return h.clock.Now()
		}
		select {
		case <-tick.C:
			h.clock.Advance(step)
		case <-deadline.C:
			h.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestTheWatcherLoopFailsOnTheProgressDeadline(t *testing.T) {
	h := newWatcherHarness(t)
	h.register(watcherJob("web", 2, nil))
	h.deploy("web", "d1", 2, 0, rolling)
	h.runWatcher()
	// The loop asks for one eval when it first sees the deployment.
	h.waitFor("the first eval", defaultEvalBatch, func() bool { return len(h.watcherEvals("web")) == 1 })
	at := h.waitFor("the deployment to fail", 30*time.Second, func() bool {
		return h.deployment("d1").Status == structs.DeploymentStatusFailed
	})
	h.wantStatus("d1", structs.DeploymentStatusFailed, structs.DeploymentStatusDescriptionProgressDeadline)
	if failed := time.Unix(0, h.deployment("d1").ModifyTime); failed.Before(watchT0.Add(10 * time.Minute)) {
		t.Fatalf("failed at %v, before the progress deadline %v", failed, watchT0.Add(10*time.Minute))
	}
	if n := len(h.watcherEvals("web")); n != 2 {
		t.Fatalf("%d watcher evals by %v, want 2 (the first look, the failure): one per change, not one per tick", n, at)
	}
}

func TestANewLeadersWatcherPicksUpFromState(t *testing.T) {
	h := newWatcherHarness(t)
	ids := stableThenBroken(h, true)
	stop := h.runWatcher()
	h.health(true, ids[0])
	h.waitFor("an eval for the healthy alloc", defaultEvalBatch, func() bool {
		d := h.deployment("d1")
		return d.TaskGroups["web"].HealthyAllocs == 1 && len(h.watcherEvals("web")) > 0
	})
	// Leadership moves: the old loop stops, and meanwhile an alloc turns
	// unhealthy with no watcher running.
	stop()
	h.health(false, ids[1])
	if d := h.deployment("d1"); d.Status != structs.DeploymentStatusRunning {
		t.Fatalf("deployment changed to %s with no watcher", d.Status)
	}
	h.runWatcher()
	h.waitFor("the new leader's watcher to fail and revert", 0, func() bool {
		return h.deployment("d1").Status == structs.DeploymentStatusFailed
	})
	h.wantStatus("d1", structs.DeploymentStatusFailed, "Failed due to unhealthy allocations - rolling back to job version 0")
	if job, _ := h.st.JobByID(nil, "default", "web"); job.Version != 2 {
		t.Fatalf("job is version %d after the revert, want 2", job.Version)
	}
}

func TestDeploymentFailureDescriptionsAreNomads(t *testing.T) {
	got := structs.DeploymentStatusDescriptionRollback(structs.DeploymentStatusDescriptionProgressDeadline, 3)
	if want := "Failed due to progress deadline - rolling back to job version 3"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	if !strings.HasSuffix(structs.DeploymentStatusDescriptionNoRollbackTarget("x"), "no stable job version to auto revert to") {
		t.Fatal("no-target description changed")
	}
}

// refusingHarness is a watcherHarness whose status writes the FSM keeps
// refusing.
type refusingHarness struct {
	*watcherHarness
	mu       sync.Mutex
	attempts int
}

func (r *refusingHarness) ApplyDeploymentStatus(*structs.DeploymentStatusUpdateRequest) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts++
	return fmt.Errorf("refused")
}

func TestAWriteThatKeepsFailingIsRetriedLessAndLessOften(t *testing.T) {
	h := newWatcherHarness(t)
	h.register(watcherJob("web", 1, nil))
	ids := h.deploy("web", "d1", 1, 0, rolling)
	h.health(false, ids...)
	r := &refusingHarness{watcherHarness: h}
	w := New(h.config(r))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	attempts := func() int {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.attempts
	}
	// Retries come 1s, 2s, 4s, 8s... apart: by 20s of fake time at most
	// five attempts (at 0, 1, 3, 7 and 15s), where a fixed one-second
	// retry would have made twenty.
	h.waitFor("the clock to reach 20s", 100*time.Millisecond, func() bool {
		return !h.clock.Now().Before(watchT0.Add(20 * time.Second))
	})
	if n := attempts(); n < 2 || n > 5 {
		t.Fatalf("%d attempts in 20s, want between 2 and 5", n)
	}
}

// flakyState is the harness's store seen through the watcher's State,
// refusing AllocsByDeployment while failing is set.
type flakyState struct {
	State
	mu      sync.Mutex
	failing bool
	reads   int
}

func (f *flakyState) AllocsByDeployment(ws memdb.WatchSet, id string) ([]*structs.Allocation, error) {
	f.mu.Lock()
	f.reads++
	failing := f.failing
	f.mu.Unlock()
	if failing {
		return nil, fmt.Errorf("read refused")
	}
	return f.State.AllocsByDeployment(ws, id)
}

func (f *flakyState) set(failing bool) (reads int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failing = failing
	return f.reads
}

func TestAReadThatFailsIsRetriedAfterTheRetryInterval(t *testing.T) {
	h := newWatcherHarness(t)
	h.register(watcherJob("web", 1, nil))
	ids := h.deploy("web", "d1", 1, 0, rolling)
	h.health(false, ids...)
	flaky := &flakyState{State: h.st, failing: true}
	cfg := h.config(h)
	cfg.State = func() State { return flaky }
	w := New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	// The failed pass leaves one timer, its retry, and writes nothing.
	if !h.clock.WaitForTimers(1, 10*time.Second) {
		t.Fatal("the watcher armed no retry after a failed read")
	}
	if reads := flaky.set(false); reads != 1 {
		t.Fatalf("%d reads before the retry, want 1", reads)
	}
	h.wantStatus("d1", structs.DeploymentStatusRunning, "")
	h.clock.Advance(defaultRetry)
	h.waitFor("the retried pass to fail the deployment", 0, func() bool {
		return h.deployment("d1").Status == structs.DeploymentStatusFailed
	})
	h.wantStatus("d1", structs.DeploymentStatusFailed, structs.DeploymentStatusDescriptionFailedAllocations)
}
