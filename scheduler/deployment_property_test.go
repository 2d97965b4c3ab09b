package scheduler

import (
	"testing"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
	"pgregory.net/rapid"
)

// TestRandomRolloutsKeepTheServiceUp rolls a random service (count,
// max_parallel, canaries) to a new version through random interleavings of
// health reports, evals, pauses, resumes and promotions, through the real
// state store. After every eval:
//
//   - at most max_parallel new allocs wait for their health (before
//     promotion: no more new allocs than canaries);
//   - old allocs plus healthy new ones are never fewer than count minus
//     max_parallel, and before promotion every old alloc still runs;
//   - a paused deployment placed nothing.
//
// Once it is resumed, promoted and every alloc is healthy, the rollout
// finishes: count allocs of the new version and a successful deployment.
func TestRandomRolloutsKeepTheServiceUp(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := NewHarness(rt)
		h.Nodes(4)
		count := rapid.IntRange(1, 6).Draw(rt, "count")
		maxParallel := rapid.IntRange(1, 3).Draw(rt, "maxParallel")
		canaries := rapid.IntRange(0, 2).Draw(rt, "canaries")
		job := deployed(rt, h, rollingJob(count, maxParallel, canaries))
		v1 := h.newVersion(job, "1")
		h.Run(v1, structs.EvalTriggerJobRegister)
		d := h.Deployment(v1)
		if d == nil || d.JobVersion != v1.Version {
			rt.Fatalf("no deployment for the new version: %+v", d)
		}

		waitingNew := func() (waiting, healthy []*structs.Allocation) {
			cur, _ := byVersion(h.Live(v1), v1.Version)
			for _, a := range cur {
				if a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil && *a.DeploymentStatus.Healthy {
					healthy = append(healthy, a)
				} else {
					waiting = append(waiting, a)
				}
			}
			return waiting, healthy
		}
		promoted := func() bool { return h.Deployment(v1).TaskGroups["web"].Promoted }
		check := func(step int) {
			waiting, healthy := waitingNew()
			_, old := byVersion(h.Live(v1), v1.Version)
			if canaries > 0 && !promoted() {
				if n := len(waiting) + len(healthy); n > canaries {
					rt.Fatalf("step %d: %d new allocs before promotion, canary = %d", step, n, canaries)
				}
				if len(old) != count {
					rt.Fatalf("step %d: %d old allocs before promotion, want %d", step, len(old), count)
				}
				return
			}
			if len(waiting) > maxParallel {
				rt.Fatalf("step %d: %d new allocs wait for health, max_parallel %d", step, len(waiting), maxParallel)
			}
			if serving := len(old) + len(healthy); serving < count-maxParallel {
				rt.Fatalf("step %d: %d serving (%d old, %d healthy new), want >= %d", step, serving, len(old), len(healthy), count-maxParallel)
			}
		}
		promote := func() {
			st := h.Deployment(v1).TaskGroups["web"]
			if st.DesiredCanaries == 0 || st.Promoted {
				return
			}
			if waiting, healthy := waitingNew(); len(waiting) > 0 || len(healthy) < st.DesiredCanaries {
				return // the watcher promotes only healthy canaries
			}
			c := h.Deployment(v1).Copy()
			c.TaskGroups["web"].Promoted = true
			if err := h.State.Write(h.next(), func(tx *state.Txn) error { return tx.UpsertDeployment(c) }); err != nil {
				rt.Fatal(err)
			}
		}
		paused := false
		setPaused := func(p bool) {
			if !h.Deployment(v1).Active() {
				return // an ended deployment cannot be paused or resumed (the state store refuses it)
			}
			paused = p
			status := structs.DeploymentStatusRunning
			if p {
				status = structs.DeploymentStatusPaused
			}
			h.SetDeploymentStatus(h.Deployment(v1), status)
		}

		steps := rapid.IntRange(0, 40).Draw(rt, "steps")
		for step := 0; step < steps; step++ {
			switch rapid.IntRange(0, 9).Draw(rt, "action") {
			case 0, 1, 2:
				if waiting, _ := waitingNew(); len(waiting) > 0 {
					h.Health(waiting[rapid.IntRange(0, len(waiting)-1).Draw(rt, "which")], true)
				}
			case 3:
				setPaused(!paused)
			case 4:
				promote()
			default:
				before := len(h.Allocs(v1))
				h.Run(v1, structs.EvalTriggerDeploymentWatcher)
				if paused && len(h.Allocs(v1)) != before {
					rt.Fatalf("step %d: a paused deployment placed %d", step, len(h.Allocs(v1))-before)
				}
				check(step)
			}
		}

		if paused {
			setPaused(false)
		}
		for i := 0; i < 3*count+6; i++ {
			h.HealthAll(v1)
			promote()
			h.Run(v1, structs.EvalTriggerDeploymentWatcher)
			check(steps + i)
			if h.Deployment(v1).Status == structs.DeploymentStatusSuccessful {
				break
			}
		}
		if got := h.Deployment(v1); got.Status != structs.DeploymentStatusSuccessful {
			rt.Fatalf("rollout did not finish: %s, live %s", got.Status, names(h.Live(v1)))
		}
		cur, old := byVersion(h.Live(v1), v1.Version)
		if len(cur) != count || len(old) != 0 {
			rt.Fatalf("finished with %d new and %d old, want %d new", len(cur), len(old), count)
		}
	})
}
