package scheduler

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
	"pgregory.net/rapid"
)

// TestRandomHistoriesThroughTheStateStore drives a service job through
// random node disconnects, reconnects (heartbeat, then client report),
// downs, alloc failures, job updates and time, processing every eval the
// cluster would create (node updates, reconnects, due follow-ups, blocked
// evals) through the generic scheduler and the real state store. The state
// store validates every plan against the allocation state machine, and the
// harness fails on any overcommitted node. After each processed eval:
//
//   - the eval was completed, reblocked or failed with a follow-up;
//   - no alloc was rewritten (an alloc keeps its name and node: a new
//     placement that took an existing alloc's ID would change them);
//   - no more allocs are pending or running than the group's count;
//   - once every node is ready and every client has reported, exactly
//     count allocs run (or are queued in a blocked eval).
func TestRandomHistoriesThroughTheStateStore(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := NewHarness(rt)
		// IDs from a sequence of this history's own: a failing history
		// replays with the same IDs, so the same orders and seeds.
		// The base is drawn: eval IDs seed the schedulers, so it explores
		// their tie-breaks as well.
		seq := rapid.Uint64Range(0, 1<<40).Draw(rt, "idBase")
		h.NewID = func() string { seq++; return fmt.Sprintf("%08x-0000-4000-9000-%012x", 0, seq) }
		nodes := h.Nodes(4)
		j := serviceJob(rapid.IntRange(1, 6).Draw(rt, "count"))
		j.ID = "web"
		if rapid.Bool().Draw(rt, "disconnect") {
			j.TaskGroups[0].Disconnect = &structs.DisconnectStrategy{
				LostAfter: 10 * time.Minute,
				Replace:   structs.BoolPtr(rapid.Bool().Draw(rt, "replace")),
				Reconcile: rapid.SampledFrom([]string{structs.ReconcileBestScore, structs.ReconcileKeepOriginal,
					structs.ReconcileKeepReplacement, structs.ReconcileLongestRunning}).Draw(rt, "reconcile"),
			}
			j.Canonicalize()
		}
		job := h.Job(j)
		h.Run(job, structs.EvalTriggerJobRegister)

		nodeStatus := func(id string) string {
			n, _ := h.State.NodeByID(nil, id)
			return n.Status
		}
		allocsWhere := func(f func(a *structs.Allocation) bool) []*structs.Allocation {
			var out []*structs.Allocation
			for _, a := range h.Allocs(job) {
				if f(a) {
					out = append(out, a)
				}
			}
			return out
		}
		process := func(e *structs.Evaluation, rt *rapid.T) {
			before := len(h.Updated) + len(h.Reblocked)
			placed := map[string]string{} // alloc ID -> name@node: never rewritten
			for _, a := range h.Allocs(job) {
				placed[a.ID] = a.Name + "@" + a.NodeID
			}
			h.Process(e)
			if len(h.Updated)+len(h.Reblocked) == before {
				rt.Fatalf("eval %s (%s) left no outcome", e.ID, e.TriggeredBy)
			}
			for _, a := range h.Allocs(h.StoredJob(job.Namespace, job.ID)) {
				if was, ok := placed[a.ID]; ok && was != a.Name+"@"+a.NodeID {
					rt.Fatalf("eval %s (%s) rewrote alloc %s from %s to %s@%s", e.ID, e.TriggeredBy, a.ID, was, a.Name, a.NodeID)
				}
			}
			job = h.StoredJob(job.Namespace, job.ID)
			live := 0
			for _, a := range h.Allocs(job) {
				if !a.TerminalStatus() && a.ClientStatus != structs.AllocClientStatusUnknown {
					live++
				}
			}
			if live > job.TaskGroups[0].Count {
				rt.Fatalf("%d allocs run for a count of %d: %s", live, job.TaskGroups[0].Count, names(h.Allocs(job)))
			}
		}
		nodeEval := func(rt *rapid.T) { process(h.Eval(job, structs.EvalTriggerNodeUpdate), rt) }

		rt.Repeat(map[string]func(*rapid.T){
			"disconnect": func(rt *rapid.T) {
				n := rapid.SampledFrom(nodes).Draw(rt, "node")
				if nodeStatus(n.ID) == structs.NodeStatusReady {
					status := structs.NodeStatusDown
					if j.TaskGroups[0].Disconnect != nil {
						status = structs.NodeStatusDisconnected
					}
					h.NodeStatus(n.ID, status)
					nodeEval(rt)
				}
			},
			"heartbeat": func(rt *rapid.T) {
				n := rapid.SampledFrom(nodes).Draw(rt, "node")
				if nodeStatus(n.ID) != structs.NodeStatusReady {
					h.NodeStatus(n.ID, structs.NodeStatusReady)
					nodeEval(rt)
				}
			},
			"report": func(rt *rapid.T) {
				cand := allocsWhere(func(a *structs.Allocation) bool {
					return a.ClientStatus == structs.AllocClientStatusUnknown && nodeStatus(a.NodeID) == structs.NodeStatusReady
				})
				if len(cand) > 0 {
					a := rapid.SampledFrom(cand).Draw(rt, "alloc")
					h.Client(a, rapid.SampledFrom([]string{structs.AllocClientStatusRunning, structs.AllocClientStatusFailed}).Draw(rt, "reported"))
					process(h.Eval(job, structs.EvalTriggerReconnect), rt)
				}
			},
			"clients": func(rt *rapid.T) {
				for _, a := range allocsWhere(func(a *structs.Allocation) bool {
					return !a.ClientTerminalStatus() && a.ClientStatus != structs.AllocClientStatusUnknown && nodeStatus(a.NodeID) == structs.NodeStatusReady
				}) {
					switch {
					case a.ServerTerminalStatus():
						h.Client(a, structs.AllocClientStatusComplete)
					case a.ClientStatus == structs.AllocClientStatusPending:
						h.Client(a, structs.AllocClientStatusRunning)
					}
				}
			},
			"fail": func(rt *rapid.T) {
				cand := allocsWhere(func(a *structs.Allocation) bool {
					return a.ClientStatus == structs.AllocClientStatusRunning && !a.ServerTerminalStatus() && nodeStatus(a.NodeID) == structs.NodeStatusReady
				})
				if len(cand) > 0 {
					h.Client(rapid.SampledFrom(cand).Draw(rt, "alloc"), structs.AllocClientStatusFailed)
					process(h.Eval(job, structs.EvalTriggerRetryFailedAlloc), rt)
				}
			},
			"update": func(rt *rapid.T) {
				up := job.Copy()
				up.TaskGroups[0].Count = rapid.IntRange(0, 6).Draw(rt, "newCount")
				if rapid.Bool().Draw(rt, "destructive") {
					up.TaskGroups[0].Tasks[0].Env = map[string]string{"V": fmt.Sprint(job.Version + 1)}
				}
				job = h.Job(up)
				process(h.Eval(job, structs.EvalTriggerJobRegister), rt)
			},
			"time": func(rt *rapid.T) {
				h.Now = h.Now.Add(time.Duration(rapid.IntRange(1, 15*60).Draw(rt, "seconds")) * time.Second)
				evals, _ := h.State.EvalsByJob(nil, job.Namespace, job.ID)
				sort.Slice(evals, func(i, j int) bool { return evals[i].CreateIndex < evals[j].CreateIndex })
				for _, e := range evals {
					if e.Status == structs.EvalStatusPending && !e.WaitUntil.After(h.Now) {
						process(e, rt)
					}
				}
			},
			"blocked": func(rt *rapid.T) {
				evals, _ := h.State.EvalsByJob(nil, job.Namespace, job.ID)
				for _, e := range evals {
					if e.Status == structs.EvalStatusBlocked {
						process(e, rt)
					}
				}
			},
		})

		// Heal everything and converge: exactly count allocs run.
		for _, n := range nodes {
			if nodeStatus(n.ID) != structs.NodeStatusReady {
				h.NodeStatus(n.ID, structs.NodeStatusReady)
			}
		}
		for _, a := range allocsWhere(func(a *structs.Allocation) bool { return a.ClientStatus == structs.AllocClientStatusUnknown }) {
			h.Client(a, structs.AllocClientStatusRunning)
		}
		for i := 0; i < 3; i++ {
			h.Now = h.Now.Add(time.Hour)
			nodeEval(rt)
		}
		live := 0
		for _, a := range h.Allocs(job) {
			if !a.TerminalStatus() {
				live++
			}
		}
		if live != job.TaskGroups[0].Count {
			rt.Fatalf("after healing: %d live for count %d: %s", live, job.TaskGroups[0].Count, names(h.Allocs(job)))
		}
	})
}
