package allocrunner

import (
	"time"

	"github.com/drover-sched/drover/structs"
)

// Deployment health. An alloc placed by a deployment tells the servers
// whether it became healthy, which is what lets a rolling update go on
// (or fail). Drover registers no service checks, so every health_check mode
// except "manual" judges by task states: healthy once every task has been
// running for min_healthy_time without a restart; unhealthy if a task
// fails or restarts, or healthy_deadline passes first. The verdict is
// reported once per deployment.
//
// The watch is part of the loop's state: the loop judges it again on
// every task change and when one of its timers fires, and drops it once
// it has a verdict, when the alloc moves to a new deployment, or when the
// tasks are done.

// healthWatch is a pending verdict for one deployment.
type healthWatch struct {
	deploymentID    string
	update          structs.UpdateStrategy
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

// maybeWatchHealth starts a health watch if the alloc belongs to a
// deployment that has no verdict from this client yet.
func (ar *AllocRunner) maybeWatchHealth() {
	st := &ar.st
	a := st.alloc
	if st.tasksDone || a.DeploymentID == "" || a.DeploymentID == st.healthFor || a.ServerTerminalStatus() || st.killing {
		return
	}
	st.healthFor = a.DeploymentID
	if a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil {
		return // reported before this client restarted
	}
	tg := a.LookupTaskGroup()
	if tg == nil || tg.Update == nil || tg.Update.HealthCheck == structs.UpdateHealthCheckManual {
		return
	}
	w := &healthWatch{deploymentID: a.DeploymentID, update: *tg.Update, restartsAtStart: ar.totalRestarts()}
	if w.update.HealthyDeadline > 0 {
		w.deadline = ar.clock.After(w.update.HealthyDeadline)
	}
	st.watch = w
	ar.checkHealth()
}

// checkHealth judges the pending watch by the tasks' current states.
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
	now := ar.clock.Now()
	if !allRunning {
		w.since, w.ready = time.Time{}, nil
		return
	}
	if w.since.IsZero() {
		w.since = now
	}
	if now.Sub(w.since) >= w.update.MinHealthyTime {
		ar.verdict(true)
		return
	}
	w.ready = ar.clock.After(w.update.MinHealthyTime - now.Sub(w.since))
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
// still in that deployment, to be reported.
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
	ar.logger.Info("alloc deployment health", "deployment_id", deploymentID, "healthy", healthy)
	ar.wake()
}
