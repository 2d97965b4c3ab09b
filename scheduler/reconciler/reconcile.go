package reconciler

import (
	"sort"
	"time"

	"github.com/drover-sched/drover/structs"
)

// Reconcile decides what should happen to a job's allocations. It is
// deterministic: the same Input (with an equally seeded NewID) gives the
// same Result.
func Reconcile(in Input) *Result {
	batch := isBatch(in)
	classifier := newClassifier(in.Job, batch, in.Eval, in.Now, in.ReportWindow)
	pending := pendingEvals(in.Evals)
	view := viewRollout(in)
	plans := planGroups(in.Job, in.Allocs, in.Nodes, classifier, func(tg *structs.TaskGroup, allocs []*structs.Allocation) *groupPlan {
		return planGroup(groupInput{
			job: in.Job, tg: tg, allocs: allocs, nodes: in.Nodes, batch: batch,
			now: in.Now, evalID: in.Eval.ID, pendingEval: func(id string) bool { return pending[id] != nil },
			classifier: classifier, rollout: view.group(tg.Name),
		})
	})

	res := &Result{DesiredTGUpdates: map[string]*structs.DesiredUpdates{}, Buckets: map[string]*Buckets{}}
	res.Followups = makeAllFollowups(in, plans)
	for _, plan := range plans {
		emit(res, plan)
	}
	res.Cancel = cancelTimeouts(in, plans, pending)
	deploy(in, view, plans, res)
	return res
}

// deploy fills the result's deployment: the one to create if a group
// needs it and the current version has none, the one placements join, and
// the status changes (an older version's deployment cancelled, the current
// one successful once every group is done).
func deploy(in Input, view *rolloutView, plans []*groupPlan, res *Result) {
	res.DeploymentUpdates = view.updates
	if in.Job == nil || in.Job.Stopped() {
		return
	}
	if cur := view.current; cur != nil {
		if cur.Active() {
			res.DeploymentID = cur.ID
		}
		if cur.Status != structs.DeploymentStatusRunning {
			return
		}
		for _, plan := range plans {
			if !plan.deploy.done {
				return
			}
		}
		res.DeploymentUpdates = append(res.DeploymentUpdates, &structs.DeploymentStatusUpdate{
			DeploymentID: cur.ID, Status: structs.DeploymentStatusSuccessful, StatusDescription: structs.DeploymentStatusDescriptionSuccessful,
		})
		return
	}
	var d *structs.Deployment
	for _, plan := range plans {
		if plan.deploy.create == nil {
			continue
		}
		if d == nil {
			d = newDeployment(in.NewID(), in.Job, in.Eval.Priority, in.Now.UnixNano())
		}
		d.TaskGroups[plan.name] = plan.deploy.create
	}
	if d != nil {
		describeNew(d)
		res.Deployment, res.DeploymentID = d, d.ID
	}
}

// makeAllFollowups creates the follow-up evals of every group, one per
// window of due times and kind, and links the allocs to them.
func makeAllFollowups(in Input, plans []*groupPlan) []*structs.Evaluation {
	var delayed, timeouts, reports []due
	var rollingWait time.Duration
	for _, plan := range plans {
		delayed = append(delayed, plan.delayed...)
		for _, id := range plan.decisions.order {
			if dec := plan.decisions.byID[id]; dec.disconnect && dec.stop == nil && !dec.expiry.IsZero() {
				timeouts = append(timeouts, dueOf(dec.alloc, dec.expiry))
			}
		}
		reports = append(reports, plan.awaiting...)
		// A halted rollout defers with no wait: the operator's or the
		// watcher's action makes its next eval.
		if plan.deferred > 0 && plan.rollingWait > 0 && (rollingWait == 0 || plan.rollingWait < rollingWait) {
			rollingWait = plan.rollingWait
		}
	}
	resched, reschedIDs := makeFollowups(delayed, in.Eval, in.Job, structs.EvalTriggerRetryFailedAlloc, in.Now, in.NewID)
	timeout, timeoutIDs := makeFollowups(timeouts, in.Eval, in.Job, structs.EvalTriggerMaxDisconnectTimeout, in.Now, in.NewID)
	report, _ := makeFollowups(uncovered(reports, in.Evals, in.Eval.ID), in.Eval, in.Job, structs.EvalTriggerReconnectReportTimeout, in.Now, in.NewID)
	out := append(append(resched, timeout...), report...)
	if rollingWait > 0 && !rollingPending(in) {
		out = append(out, followupEval(in.NewID(), in.Eval, in.Job, structs.EvalTriggerRollingUpdate, in.Now.Add(rollingWait), in.Now))
	}
	for _, plan := range plans {
		decided := plan.decisions
		for _, item := range plan.delayed {
			id := reschedIDs[item.allocID]
			a := plan.allocByID(item.allocID)
			decided.rewrite(a, UpdateFollowup, func(c *structs.Allocation) { c.FollowupEvalID = id })
		}
		for _, id := range decided.order {
			if dec := decided.byID[id]; dec.disconnect && dec.stop == nil {
				dec.followup = timeoutIDs[id]
			}
		}
	}
	return out
}

// rollingPending reports whether another rolling-update eval of the job is
// already waiting. Every eval that defers destructive updates would
// otherwise start its own chain of follow-ups, and under a deployment,
// whose watcher makes an eval for every change of health, the chains would
// multiply; one waiting follow-up is enough to look again.
func rollingPending(in Input) bool {
	for _, e := range in.Evals {
		if e.Status == structs.EvalStatusPending && e.TriggeredBy == structs.EvalTriggerRollingUpdate && e.ID != in.Eval.ID {
			return true
		}
	}
	return false
}

// allocByID finds an alloc the group decided about.
func (plan *groupPlan) allocByID(id string) *structs.Allocation {
	if dec, ok := plan.decisions.byID[id]; ok {
		return dec.alloc
	}
	for k := Untainted; k <= Ignore; k++ {
		for _, a := range plan.buckets.Get(k) {
			if a.ID == id {
				return a
			}
		}
	}
	return nil
}

// emit adds one group's decisions to the result and counts them.
func emit(res *Result, plan *groupPlan) {
	counts := &structs.DesiredUpdates{}
	res.DesiredTGUpdates[plan.name] = counts
	res.Buckets[plan.name] = plan.buckets
	touched := map[string]bool{}
	// An alloc stopped by its replacement's placement is not also updated:
	// the conditional stop carries its newest version. Should the placement
	// fail, the alloc is left as it is and the next evaluation decides again.
	replaced := map[string]bool{}
	for _, p := range plan.places {
		if p.Previous != nil && p.StopPrevious != nil {
			replaced[p.Previous.ID] = true
		}
	}
	decided := plan.decisions
	for _, id := range decided.order {
		dec := decided.byID[id]
		switch {
		case replaced[id] && dec.stop == nil && !dec.disconnect:
			continue
		case dec.stop != nil:
			stop := *dec.stop
			stop.Alloc = dec.alloc
			res.Stops = append(res.Stops, stop)
			counts.Stop++
		case dec.disconnect:
			res.Disconnects = append(res.Disconnects, Disconnect{Alloc: dec.alloc, FollowupEvalID: dec.followup})
			counts.Disconnect++
		case dec.update != 0:
			res.Updates = append(res.Updates, Update{Alloc: dec.alloc, Kind: dec.update})
			if dec.update&UpdateInPlace != 0 {
				counts.InPlaceUpdate++
			}
		default:
			continue
		}
		touched[id] = true
	}
	for _, a := range plan.kept {
		res.Keep = append(res.Keep, decided.current(a))
	}
	counts.Reconnect = uint64(len(plan.reconnected))
	counts.RescheduleLater = uint64(len(plan.delayed))
	for _, p := range plan.places {
		res.Places = append(res.Places, p)
		switch p.Reason {
		case PlaceMigrate:
			counts.Migrate++
		case PlaceDestructive:
			counts.DestructiveUpdate++
		case PlaceReschedule:
			counts.RescheduleNow++
			counts.Place++
		case PlaceCanary:
			counts.Canary++
		default:
			counts.Place++
		}
		if p.Previous != nil {
			touched[p.Previous.ID] = true
		}
	}
	total := 0
	for k := Untainted; k <= Ignore; k++ {
		total += len(plan.buckets.Get(k))
	}
	counts.Ignore = uint64(total - len(touched))
}

// planStopAll stops every alloc of a group that is not already finished:
// the job was stopped or deleted, or the group was removed from it. Allocs
// on disconnected nodes are stopped too (they stop when their client comes
// back); allocs on down or deleted nodes are marked lost.
func planStopAll(name string, allocs []*structs.Allocation, nodes map[string]*structs.Node, c Classifier, desc string) *groupPlan {
	buckets := SortInto(allocs, nodes, c)
	plan := &groupPlan{name: name, buckets: buckets, decisions: newDecisions(), deploy: groupDeploy{done: true}}
	for k := Untainted; k <= Ignore; k++ {
		for _, a := range buckets.Get(k) {
			if a.TerminalStatus() {
				continue
			}
			node := nodes[a.NodeID]
			plan.decisions.stop(a, desc, node == nil || node.Status == structs.NodeStatusDown)
		}
	}
	return plan
}

// cancelTimeouts cancels the pending disconnect-timeout evals of allocs
// that reconnected in this result, unless another alloc still waits on the
// same eval.
func cancelTimeouts(in Input, plans []*groupPlan, pending map[string]*structs.Evaluation) []*structs.Evaluation {
	reconnected := map[string]bool{}
	var candidates []string
	for _, plan := range plans {
		for _, r := range plan.reconnected {
			reconnected[r.ID] = true
			if r.FollowupEvalID != "" {
				candidates = append(candidates, r.FollowupEvalID)
			}
		}
	}
	if len(candidates) == 0 {
		return nil
	}
	stillNeeded := map[string]bool{}
	for _, a := range in.Allocs {
		if !reconnected[a.ID] && !a.ServerTerminalStatus() && a.NeedsToReconnect() {
			stillNeeded[a.FollowupEvalID] = true
		}
	}
	var out []*structs.Evaluation
	done := map[string]bool{}
	for _, id := range candidates {
		e := pending[id]
		if e == nil || done[id] || stillNeeded[id] || id == in.Eval.ID || e.TriggeredBy != structs.EvalTriggerMaxDisconnectTimeout {
			continue
		}
		done[id] = true
		c := e.Copy()
		c.Status = structs.EvalStatusCancelled
		c.StatusDescription = "canceled: the allocs it was waiting for reconnected"
		c.ModifyTime = in.Now.UnixNano()
		out = append(out, c)
	}
	return out
}

// pendingEvals indexes the job's pending evals by ID.
func pendingEvals(evals []*structs.Evaluation) map[string]*structs.Evaluation {
	m := map[string]*structs.Evaluation{}
	for _, e := range evals {
		if e.Status == structs.EvalStatusPending {
			m[e.ID] = e
		}
	}
	return m
}

// planGroups plans each group the job has or has allocs of, in
// groupNames' order: every alloc stops when the job is stopped or no
// longer has the group, and plan decides the group's allocs otherwise.
func planGroups(job *structs.Job, allocs []*structs.Allocation, nodes map[string]*structs.Node, c Classifier, plan func(*structs.TaskGroup, []*structs.Allocation) *groupPlan) []*groupPlan {
	byGroup := map[string][]*structs.Allocation{}
	for _, a := range allocs {
		byGroup[a.TaskGroup] = append(byGroup[a.TaskGroup], a)
	}
	stopped := job == nil || job.Stopped()
	var plans []*groupPlan
	for _, name := range groupNames(job, byGroup) {
		tg := job.LookupTaskGroup(name)
		switch {
		case stopped:
			plans = append(plans, planStopAll(name, byGroup[name], nodes, c, DescJobStopped))
		case tg == nil:
			plans = append(plans, planStopAll(name, byGroup[name], nodes, c, DescGroupRemoved))
		default:
			plans = append(plans, plan(tg, byGroup[name]))
		}
	}
	return plans
}

// groupNames lists the job's groups in job order, then groups that only
// existing allocs still name, sorted.
func groupNames(job *structs.Job, byGroup map[string][]*structs.Allocation) []string {
	var out []string
	seen := map[string]bool{}
	if job != nil {
		for _, tg := range job.TaskGroups {
			out = append(out, tg.Name)
			seen[tg.Name] = true
		}
	}
	var extra []string
	for name := range byGroup {
		if !seen[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

func isBatch(in Input) bool {
	if in.Job != nil {
		return in.Job.Type == structs.JobTypeBatch
	}
	return in.Eval != nil && in.Eval.Type == structs.JobTypeBatch
}
