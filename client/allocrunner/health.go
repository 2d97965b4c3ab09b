package allocrunner

import (
	"time"

	"github.com/drover-sched/drover/structs"
)

// Allocation health. An alloc placed by a deployment tells the servers
// whether it became healthy, which is what lets a rolling update go on
// (or fail); it is judged by its group's update block. Any other alloc of
// a service job is judged the same way by its group's migrate block, so
// that the drainer can tell when a replacement for a drained alloc has
// become healthy and the next one may move.
//
// A verdict follows the policy's health_check: "task_states" and "checks"
// want every task running for min_healthy_time without a restart, and
// "checks" also wants every check of the alloc's services passing for that
// time; a task that fails or restarts, or healthy_deadline passing first,
// makes the alloc unhealthy; "manual" leaves the verdict to an operator and
// the client reports nothing. The verdict is reported once per deployment
// (once for a migration), with the Canary flag as the scheduler set it.
//
// The watch is part of the loop's state: the loop judges it again on
// every task change and when one of its timers fires, and drops it once
// it has a verdict, when the alloc moves to a new deployment, or when the
// tasks are done.

// healthPolicy is how one alloc's health is judged: the group's update
// block for a deployment's alloc, its migrate block otherwise.
type healthPolicy struct {
	mode            string // structs.UpdateHealthCheck*
	minHealthyTime  time.Duration
	healthyDeadline time.Duration
}

// healthPolicyFor returns the policy that judges a, and false when the
// client is to judge nothing: the alloc is not a service job's and has no
// deployment, its group has no update (deployment) or migrate block, or
// the block asks for manual health.
func healthPolicyFor(a *structs.Allocation, tg *structs.TaskGroup) (healthPolicy, bool) {
	var p healthPolicy
	switch {
	case tg == nil:
		return p, false
	case a.DeploymentID != "":
		if tg.Update == nil {
			return p, false
		}
		p = healthPolicy{mode: tg.Update.HealthCheck, minHealthyTime: tg.Update.MinHealthyTime, healthyDeadline: tg.Update.HealthyDeadline}
	case a.Job != nil && a.Job.Type == structs.JobTypeService:
		if tg.Migrate == nil {
			return p, false
		}
		p = healthPolicy{mode: tg.Migrate.HealthCheck, minHealthyTime: tg.Migrate.MinHealthyTime, healthyDeadline: tg.Migrate.HealthyDeadline}
	default:
		return p, false
	}
	if p.mode == "" {
		p.mode = structs.UpdateHealthCheckChecks
	}
	return p, p.mode != structs.UpdateHealthCheckManual
}

// healthWatch is a pending verdict for one deployment, or for a
// migration when deploymentID is empty.
type healthWatch struct {
	deploymentID    string
	policy          healthPolicy
	restartsAtStart uint64
	since           time.Time        // when every task was last seen running, or zero
	deadline        <-chan time.Time // healthy_deadline, or nil for none
	ready           <-chan time.Time // min_healthy_time after since, or nil
}

// readyC and deadlineC are the watch's timers for the loop's select: nil
// (never ready) without a watch.
func (w *healthWatch) readyC() <-chan time.Time {
	if w == nil {
		return nil
	}
	return w.ready
}

func (w *healthWatch) deadlineC() <-chan time.Time {
	if w == nil {
		return nil
	}
	return w.deadline
}

// maybeWatchHealth starts a health watch if the alloc is in a deployment
// (or, without one, a migration) that has no verdict from this client yet.
func (ar *AllocRunner) maybeWatchHealth() {
	st := &ar.st
	a := st.alloc
	if st.tasksDone || a.ServerTerminalStatus() || st.killing || (st.healthWatched && a.DeploymentID == st.healthFor) {
		return
	}
	first := !st.healthWatched
	if !first {
		// A new deployment: the verdict for the old one says nothing
		// about this one and must not be reported for it.
		st.health = nil
	}
	st.healthWatched, st.healthFor, st.watch = true, a.DeploymentID, nil
	if first && a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil {
		// Reported before this client restarted. (Later, the servers'
		// verdict is the old deployment's until the new one is reported.)
		return
	}
	policy, ok := healthPolicyFor(a, a.LookupTaskGroup())
	if !ok {
		return
	}
	w := &healthWatch{deploymentID: a.DeploymentID, policy: policy, restartsAtStart: ar.totalRestarts()}
	if policy.healthyDeadline > 0 {
		w.deadline = ar.clock.After(policy.healthyDeadline)
	}
	st.watch = w
	ar.checkHealth()
}

// checkHealth judges the pending watch by the tasks' current states and,
// for health_check = "checks", the checks' current results.
func (ar *AllocRunner) checkHealth() {
	w := ar.st.watch
	if w == nil {
		return
	}
	ts := ar.st.tasks
	allRunning := len(ts.runners) > 0
	var restarts uint64
	for name, tr := range ts.runners {
		s := tr.TaskState()
		restarts += s.Restarts
		if s.Failed {
			ar.verdict(false)
			return
		}
		if countsForHealth(ts.defs[name]) {
			allRunning = allRunning && s.State == structs.TaskStateRunning
		}
	}
	if restarts > w.restartsAtStart {
		ar.verdict(false)
		return
	}
	if w.policy.mode == structs.UpdateHealthCheckChecks && !ar.checks.Load().Healthy() {
		allRunning = false // not healthy yet: every check must pass too
	}
	now := ar.clock.Now()
	if !allRunning {
		w.since, w.ready = time.Time{}, nil
		return
	}
	if w.since.IsZero() {
		w.since = now
	}
	if now.Sub(w.since) >= w.policy.minHealthyTime {
		ar.verdict(true)
		return
	}
	w.ready = ar.clock.After(w.policy.minHealthyTime - now.Sub(w.since))
}

// healthDeadlinePassed judges the pending watch unhealthy.
func (ar *AllocRunner) healthDeadlinePassed() { ar.verdict(false) }

func (ar *AllocRunner) totalRestarts() uint64 {
	var n uint64
	for _, tr := range ar.st.tasks.runners {
		n += tr.TaskState().Restarts
	}
	return n
}

// verdict ends the pending watch and records its verdict, if the alloc is
// still in that deployment (or still in none), to be reported.
func (ar *AllocRunner) verdict(healthy bool) {
	st := &ar.st
	deploymentID := st.watch.deploymentID
	st.watch = nil
	if st.alloc.DeploymentID != deploymentID {
		return
	}
	ds := &structs.AllocDeploymentStatus{Healthy: &healthy, Timestamp: ar.clock.Now()}
	if old := st.alloc.DeploymentStatus; old != nil {
		ds.Canary = old.Canary
	}
	st.health = ds
	ar.logger.Info("alloc health", "deployment_id", deploymentID, "migration", deploymentID == "", "healthy", healthy)
	ar.wake()
}
