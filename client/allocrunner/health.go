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
// The watcher is a goroutine of the alloc runner, started by Run (and by
// Update when the alloc moves to a new deployment) and stopped by Run
// before it returns. It writes only ar.health, under ar.mu.

// maybeWatchHealth starts a health watcher if the alloc belongs to a
// deployment that has no verdict from this client yet.
func (ar *AllocRunner) maybeWatchHealth() {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	a := ar.alloc
	if ar.healthStop == nil || ar.healthEnded || a.DeploymentID == "" || a.DeploymentID == ar.healthFor || a.ServerTerminalStatus() || ar.killing {
		return
	}
	ar.healthFor = a.DeploymentID
	if a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil {
		return // reported before this client restarted
	}
	tg := a.LookupTaskGroup()
	if tg == nil || tg.Update == nil || tg.Update.HealthCheck == structs.UpdateHealthCheckManual {
		return
	}
	if ar.healthCancel != nil {
		close(ar.healthCancel)
	}
	cancel := make(chan struct{})
	ar.healthCancel = cancel
	u := *tg.Update
	ar.healthWG.Add(1)
	go func() {
		defer ar.healthWG.Done()
		ar.watchHealth(a.DeploymentID, u, cancel)
	}()
}

func (ar *AllocRunner) watchHealth(deploymentID string, u structs.UpdateStrategy, cancel <-chan struct{}) {
	clk := ar.clock
	var deadline <-chan time.Time
	if u.HealthyDeadline > 0 {
		deadline = clk.After(u.HealthyDeadline)
	}
	restartsAtStart := ar.totalRestarts()
	var since time.Time
	for {
		ar.mu.Lock()
		states := make([]*structs.TaskState, 0, len(ar.tasks))
		mustRun := make([]bool, 0, len(ar.tasks))
		for name, tr := range ar.tasks {
			states = append(states, tr.TaskState())
			mustRun = append(mustRun, countsForHealth(ar.defs[name]))
		}
		ar.mu.Unlock()
		allRunning := len(states) > 0
		var restarts uint64
		for i, s := range states {
			restarts += s.Restarts
			if s.Failed {
				ar.setHealth(deploymentID, false)
				return
			}
			if mustRun[i] {
				allRunning = allRunning && s.State == structs.TaskStateRunning
			}
		}
		if restarts > restartsAtStart {
			ar.setHealth(deploymentID, false)
			return
		}
		var ready <-chan time.Time
		now := clk.Now()
		if allRunning {
			if since.IsZero() {
				since = now
			}
			if now.Sub(since) >= u.MinHealthyTime {
				ar.setHealth(deploymentID, true)
				return
			}
			ready = clk.After(u.MinHealthyTime - now.Sub(since))
		} else {
			since = time.Time{}
		}
		select {
		case <-ar.healthNotify:
		case <-ready:
		case <-deadline:
			ar.setHealth(deploymentID, false)
			return
		case <-cancel:
			return
		case <-ar.healthStop:
			return
		}
	}
}

func (ar *AllocRunner) totalRestarts() uint64 {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	var n uint64
	for _, tr := range ar.tasks {
		n += tr.TaskState().Restarts
	}
	return n
}

func (ar *AllocRunner) setHealth(deploymentID string, healthy bool) {
	ar.mu.Lock()
	if ar.alloc.DeploymentID != deploymentID {
		ar.mu.Unlock()
		return
	}
	ds := &structs.AllocDeploymentStatus{Healthy: &healthy, Timestamp: ar.clock.Now()}
	if old := ar.alloc.DeploymentStatus; old != nil {
		ds.Canary = old.Canary
	}
	ar.health = ds
	ar.mu.Unlock()
	ar.logger.Info("alloc deployment health", "deployment_id", deploymentID, "healthy", healthy)
	ar.taskUpdated()
}
