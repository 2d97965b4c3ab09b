package reconciler

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
	"pgregory.net/rapid"
)

// TestPropertiesOverRandomHistories drives a job through random histories of
// node disconnects, reconnects, downs, client reports, failures, job updates
// and time passing, reconciling in between, and checks after every
// reconcile that:
//
//   - no alloc is both kept and stopped, or decided twice, in one result;
//   - no decision moves a terminal alloc back (the structs state machine
//     accepts every change, and client-terminal statuses stay);
//   - a failed alloc is rescheduled only while its chain has attempts left;
//   - once applied, the group runs no more allocs than its count, plus the
//     unknown allocs the replace policy allows to be replaced.
func TestPropertiesOverRandomHistories(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		typ := rapid.SampledFrom([]string{structs.JobTypeService, structs.JobTypeBatch}).Draw(rt, "type")
		job := testJob(typ, rapid.IntRange(1, 4).Draw(rt, "count"))
		lostAfter := rapid.SampledFrom([]time.Duration{0, 10 * time.Minute}).Draw(rt, "lostAfter")
		replace := rapid.Bool().Draw(rt, "replace")
		if lostAfter > 0 {
			policy := rapid.SampledFrom([]string{structs.ReconcileBestScore, structs.ReconcileKeepOriginal,
				structs.ReconcileKeepReplacement, structs.ReconcileLongestRunning}).Draw(rt, "reconcile")
			withDisconnect(job, lostAfter, replace, policy)
		} else {
			replace = true // lost allocs are always replaced
		}
		if rapid.Bool().Draw(rt, "limitedReschedule") {
			job.TaskGroups[0].ReschedulePolicy = &structs.ReschedulePolicy{
				Attempts: rapid.IntRange(0, 3).Draw(rt, "attempts"), Interval: time.Hour,
				Delay: 30 * time.Second, DelayFunction: structs.DelayFunctionConstant,
			}
		}
		if typ == structs.JobTypeService && rapid.Bool().Draw(rt, "rolling") {
			job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, Stagger: time.Minute}
		}
		w := newWorld(job, "n1", "n2", "n3", "n4")
		evalN := 0

		nodesIn := func(statuses ...string) []string {
			var out []string
			for id, n := range w.nodes {
				for _, s := range statuses {
					if n.Status == s {
						out = append(out, id)
					}
				}
			}
			sort.Strings(out)
			return out
		}
		allocsWhere := func(f func(a *structs.Allocation) bool) []*structs.Allocation {
			var out []*structs.Allocation
			for _, a := range w.allocs {
				if f(a) {
					out = append(out, a)
				}
			}
			return out
		}
		nodeReady := func(a *structs.Allocation) bool {
			n := w.nodes[a.NodeID]
			return n != nil && n.Status == structs.NodeStatusReady
		}
		setClient := func(a *structs.Allocation, status string) {
			c := a.Copy()
			c.ClientStatus = status
			if status == structs.AllocClientStatusRunning {
				c.TaskStates = map[string]*structs.TaskState{"server": {State: structs.TaskStateRunning, StartedAt: w.now}}
			}
			if structs.ClientTerminalStatus(status) {
				c.TaskStates = map[string]*structs.TaskState{"server": {State: structs.TaskStateDead, Failed: status == structs.AllocClientStatusFailed, FinishedAt: w.now}}
			}
			for i, x := range w.allocs {
				if x.ID == a.ID {
					w.allocs[i] = c
				}
			}
		}

		reconcile := func(rt *rapid.T) {
			evalN++
			w.evalID = fmt.Sprintf("eval-%d", evalN)
			// Sometimes run a follow-up eval that is due.
			var due []string
			for _, e := range w.evals {
				if e.Status == structs.EvalStatusPending && !e.WaitUntil.After(w.now) {
					due = append(due, e.ID)
				}
			}
			if len(due) > 0 && rapid.Bool().Draw(rt, "runFollowup") {
				w.evalID = rapid.SampledFrom(due).Draw(rt, "followup")
				for _, e := range w.evals {
					if e.ID == w.evalID {
						e.Status = structs.EvalStatusComplete
					}
				}
			}
			res := w.reconcile()
			checkResult(rt, w, res)
			before := map[string]*structs.Allocation{}
			for _, a := range w.allocs {
				before[a.ID] = a
			}
			ready := nodesIn(structs.NodeStatusReady)
			w.apply(res, func(p Placement) string {
				if len(ready) == 0 || !rapid.Bool().Draw(rt, "fits") && rapid.Bool().Draw(rt, "full") {
					return ""
				}
				return rapid.SampledFrom(ready).Draw(rt, "node")
			})
			checkApplied(rt, w, before, replace)
			checkReportTimeouts(rt, w)
		}
		rt.Repeat(map[string]func(*rapid.T){
			// Reconciling is what is tested; it runs about a third of the time.
			"reconcile":  reconcile,
			"reconcile2": reconcile,
			"reconcile3": reconcile,
			"disconnect": func(rt *rapid.T) {
				if ids := nodesIn(structs.NodeStatusReady); len(ids) > 0 {
					w.nodes[rapid.SampledFrom(ids).Draw(rt, "node")].Status = structs.NodeStatusDisconnected
				}
			},
			"down": func(rt *rapid.T) {
				if ids := nodesIn(structs.NodeStatusReady, structs.NodeStatusDisconnected); len(ids) > 0 {
					w.nodes[rapid.SampledFrom(ids).Draw(rt, "node")].Status = structs.NodeStatusDown
				}
			},
			"heartbeat": func(rt *rapid.T) {
				if ids := nodesIn(structs.NodeStatusDisconnected, structs.NodeStatusDown); len(ids) > 0 {
					n := w.nodes[rapid.SampledFrom(ids).Draw(rt, "node")]
					n.Status, n.StatusUpdatedAt = structs.NodeStatusReady, w.now.Unix()
				}
			},
			"report": func(rt *rapid.T) {
				cand := allocsWhere(func(a *structs.Allocation) bool {
					return a.ClientStatus == structs.AllocClientStatusUnknown && nodeReady(a)
				})
				if len(cand) > 0 {
					a := rapid.SampledFrom(cand).Draw(rt, "alloc")
					setClient(a, rapid.SampledFrom([]string{structs.AllocClientStatusRunning, structs.AllocClientStatusFailed, structs.AllocClientStatusComplete}).Draw(rt, "reported"))
				}
			},
			"client": func(rt *rapid.T) {
				// Every client catches up: starts what is pending and obeys stops.
				for _, a := range allocsWhere(func(a *structs.Allocation) bool { return !a.ClientTerminalStatus() && nodeReady(a) }) {
					switch {
					case a.ClientStatus == structs.AllocClientStatusUnknown:
					case a.ServerTerminalStatus():
						setClient(a, structs.AllocClientStatusComplete)
					case a.ClientStatus == structs.AllocClientStatusPending:
						setClient(a, structs.AllocClientStatusRunning)
					}
				}
			},
			"finish": func(rt *rapid.T) {
				cand := allocsWhere(func(a *structs.Allocation) bool {
					return a.ClientStatus == structs.AllocClientStatusRunning && !a.ServerTerminalStatus() && nodeReady(a)
				})
				if len(cand) > 0 {
					a := rapid.SampledFrom(cand).Draw(rt, "alloc")
					outcome := structs.AllocClientStatusFailed
					if rapid.IntRange(0, 3).Draw(rt, "completes") == 0 {
						outcome = structs.AllocClientStatusComplete
					}
					setClient(a, outcome)
				}
			},
			"update": func(rt *rapid.T) {
				w.job = nextVersion(w.job, func(j *structs.Job) {
					j.TaskGroups[0].Count = rapid.IntRange(0, 4).Draw(rt, "newCount")
					if rapid.Bool().Draw(rt, "destructive") {
						j.TaskGroups[0].Tasks[0].Env = map[string]string{"V": fmt.Sprint(j.Version)}
					} else {
						j.Meta = map[string]string{"V": fmt.Sprint(j.Version)}
					}
				})
			},
			"advance": func(rt *rapid.T) {
				w.now = w.now.Add(time.Duration(rapid.IntRange(1, 20*60).Draw(rt, "seconds")) * time.Second)
			},
		})
	})
}

// checkResult checks the invariants of one result against the world it was
// computed from.
func checkResult(rt *rapid.T, w *world, res *Result) {
	existing := map[string]*structs.Allocation{}
	for _, a := range w.allocs {
		existing[a.ID] = a
	}
	seen := map[string]string{}
	mark := func(id, what string) {
		if prev, dup := seen[id]; dup {
			rt.Fatalf("alloc %s is both %s and %s in one result", id, prev, what)
		}
		seen[id] = what
	}
	validate := func(proposed *structs.Allocation, what string) {
		old := existing[proposed.ID]
		if old == nil {
			rt.Fatalf("%s of an alloc that does not exist: %s", what, proposed.ID)
		}
		if err := structs.ValidateServerUpdate(old, proposed); err != nil {
			rt.Fatalf("%s breaks the state machine: %v", what, err)
		}
		if old.ClientTerminalStatus() && proposed.ClientStatus != old.ClientStatus {
			rt.Fatalf("%s changes terminal client status %s to %s", what, old.ClientStatus, proposed.ClientStatus)
		}
	}
	for _, s := range res.Stops {
		mark(s.Alloc.ID, "stopped")
		c := s.Alloc.Copy()
		c.DesiredStatus = structs.AllocDesiredStatusStop
		if s.Lost {
			if existing[c.ID].ClientTerminalStatus() {
				rt.Fatalf("terminal alloc %s marked lost", c.ID)
			}
			c.ClientStatus = structs.AllocClientStatusLost
		}
		validate(c, "stop")
	}
	for _, u := range res.Updates {
		mark(u.Alloc.ID, "updated")
		validate(u.Alloc, "update")
	}
	for _, d := range res.Disconnects {
		mark(d.Alloc.ID, "disconnected")
		c := d.Alloc.Copy()
		c.ClientStatus = structs.AllocClientStatusUnknown
		validate(c, "disconnect")
	}
	for _, p := range res.Places {
		if p.Previous == nil {
			continue
		}
		if p.StopPrevious != nil {
			mark(p.Previous.ID, "replaced")
			c := p.StopPrevious.Alloc.Copy()
			c.DesiredStatus = structs.AllocDesiredStatusStop
			validate(c, "conditional stop")
		}
		if p.Reason == PlaceReschedule && !p.Previous.DesiredTransition.ShouldForceReschedule() {
			pol := p.TaskGroup.ReschedulePolicy
			if !pol.Enabled() {
				rt.Fatalf("rescheduled %s although its policy is disabled", p.Previous.ID)
			}
			if !pol.Unlimited {
				failed := failedAt(p.Previous, w.now)
				n := 0
				if tr := p.Previous.RescheduleTracker; tr != nil {
					for _, e := range tr.Events {
						if failed.Sub(time.Unix(0, e.RescheduleTime)) < pol.Interval {
							n++
						}
					}
				}
				if n >= pol.Attempts {
					rt.Fatalf("rescheduled %s after %d attempts in the interval, policy allows %d", p.Previous.ID, n, pol.Attempts)
				}
			}
		}
	}
	stopped := map[string]bool{}
	for id, what := range seen {
		if what == "stopped" || what == "replaced" {
			stopped[id] = true
		}
	}
	for _, a := range res.Keep {
		if stopped[a.ID] {
			rt.Fatalf("alloc %s is both kept and stopped", a.ID)
		}
	}
}

// checkReportTimeouts checks, after a result was applied, that every alloc
// still waiting for its client's report on a ready node has a pending
// follow-up due when its report window ends, so it is never left waiting
// without a bound.
func checkReportTimeouts(rt *rapid.T, w *world) {
	c := Classifier{}
	for _, a := range w.allocs {
		n := w.nodes[a.NodeID]
		if a.ServerTerminalStatus() || a.ClientStatus != structs.AllocClientStatusUnknown || n == nil || n.Status != structs.NodeStatusReady {
			continue
		}
		deadline := c.reportDeadline(a, n)
		covered := false
		for _, e := range w.evals {
			if e.Status == structs.EvalStatusPending && e.TriggeredBy == structs.EvalTriggerReconnectReportTimeout &&
				!e.WaitUntil.Before(deadline) && e.WaitUntil.Sub(deadline) <= followupWindow {
				covered = true
			}
		}
		if !covered {
			rt.Fatalf("alloc %s waits for its report on a ready node with no follow-up due at %v", a.ID, deadline)
		}
	}
}

// checkApplied checks the world after a result was applied.
func checkApplied(rt *rapid.T, w *world, before map[string]*structs.Allocation, replace bool) {
	live, waiting := 0, 0
	for _, a := range w.allocs {
		if old := before[a.ID]; old != nil {
			if old.ClientTerminalStatus() && a.ClientStatus != old.ClientStatus {
				rt.Fatalf("terminal alloc %s went from %s to %s", a.ID, old.ClientStatus, a.ClientStatus)
			}
			if old.ServerTerminalStatus() && !a.ServerTerminalStatus() {
				rt.Fatalf("stopped alloc %s wants to run again", a.ID)
			}
		}
		if a.ServerTerminalStatus() {
			continue
		}
		switch a.ClientStatus {
		case structs.AllocClientStatusPending, structs.AllocClientStatusRunning:
			live++
		case structs.AllocClientStatusUnknown:
			if n := w.nodes[a.NodeID]; n == nil || n.Status != structs.NodeStatusReady {
				waiting++
			}
		}
	}
	count := 0
	if w.job != nil && !w.job.Stop {
		count = w.job.TaskGroups[0].Count
	}
	if live > count {
		rt.Fatalf("%d allocs run for a count of %d", live, count)
	}
	if !replace && live+waiting > count {
		rt.Fatalf("%d allocs run and %d wait unknown for a count of %d with replace=false", live, waiting, count)
	}
}

// The property test's world must stay small enough to be fast.
var _ = testing.Short
