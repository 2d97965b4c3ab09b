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
	byGroup := map[string][]*structs.Allocation{}
	for _, a := range in.Allocs {
		byGroup[a.TaskGroup] = append(byGroup[a.TaskGroup], a)
	}
	stopped := in.Job == nil || in.Job.Stopped()

	var plans []*groupPlan
	for _, name := range groupNames(in.Job, byGroup) {
		tg := in.Job.LookupTaskGroup(name)
		switch {
		case stopped:
			plans = append(plans, planStopAll(name, byGroup[name], in.Nodes, classifier, DescJobStopped))
		case tg == nil:
			plans = append(plans, planStopAll(name, byGroup[name], in.Nodes, classifier, DescGroupRemoved))
		default:
			plans = append(plans, planGroup(groupInput{
				job: in.Job, tg: tg, allocs: byGroup[name], nodes: in.Nodes, batch: batch,
				now: in.Now, evalID: in.Eval.ID, pendingEval: func(id string) bool { return pending[id] != nil },
				classifier: classifier,
			}))
		}
	}

	res := &Result{DesiredTGUpdates: map[string]*structs.DesiredUpdates{}, Buckets: map[string]*Buckets{}}
	res.Followups = makeAllFollowups(in, plans)
	for _, gp := range plans {
		emit(res, gp)
	}
	res.Cancel = cancelTimeouts(in, plans, pending)
	return res
}

// makeAllFollowups creates the follow-up evals of every group, one per
// window of due times and kind, and links the allocs to them.
func makeAllFollowups(in Input, plans []*groupPlan) []*structs.Evaluation {
	var delayed, timeouts, reports []due
	var rollingWait time.Duration
	for _, gp := range plans {
		delayed = append(delayed, gp.delayed...)
		for _, id := range gp.decisions.order {
			if x := gp.decisions.byID[id]; x.disconnect && x.stop == nil && !x.expiry.IsZero() {
				timeouts = append(timeouts, dueOf(x.alloc, x.expiry))
			}
		}
		reports = append(reports, gp.awaiting...)
		if gp.deferred > 0 && (rollingWait == 0 || gp.rollingWait < rollingWait) {
			rollingWait = gp.rollingWait
		}
	}
	resched, reschedIDs := makeFollowups(delayed, in.Eval, in.Job, structs.EvalTriggerRetryFailedAlloc, in.Now, in.NewID)
	timeout, timeoutIDs := makeFollowups(timeouts, in.Eval, in.Job, structs.EvalTriggerMaxDisconnectTimeout, in.Now, in.NewID)
	report, _ := makeFollowups(uncovered(reports, in.Evals, in.Eval.ID), in.Eval, in.Job, structs.EvalTriggerReconnectReportTimeout, in.Now, in.NewID)
	out := append(append(resched, timeout...), report...)
	if rollingWait > 0 {
		out = append(out, followupEval(in.NewID(), in.Eval, in.Job, structs.EvalTriggerRollingUpdate, in.Now.Add(rollingWait), in.Now))
	}
	for _, gp := range plans {
		d := gp.decisions
		for _, du := range gp.delayed {
			id := reschedIDs[du.allocID]
			a := gp.allocByID(du.allocID)
			d.rewrite(a, UpdateFollowup, func(c *structs.Allocation) { c.FollowupEvalID = id })
		}
		for _, id := range d.order {
			if x := d.byID[id]; x.disconnect && x.stop == nil {
				x.followup = timeoutIDs[id]
			}
		}
	}
	return out
}

// allocByID finds an alloc the group decided about.
func (gp *groupPlan) allocByID(id string) *structs.Allocation {
	if x, ok := gp.decisions.byID[id]; ok {
		return x.alloc
	}
	for k := Untainted; k <= Ignore; k++ {
		for _, a := range gp.buckets.Get(k) {
			if a.ID == id {
				return a
			}
		}
	}
	return nil
}

// emit adds one group's decisions to the result and counts them.
func emit(res *Result, gp *groupPlan) {
	du := &structs.DesiredUpdates{}
	res.DesiredTGUpdates[gp.name] = du
	res.Buckets[gp.name] = gp.buckets
	touched := map[string]bool{}
	// An alloc stopped by its replacement's placement is not also updated:
	// the conditional stop carries its newest version. Should the placement
	// fail, the alloc is left as it is and the next evaluation decides again.
	replacedBy := map[string]bool{}
	for _, p := range gp.places {
		if p.Previous != nil && p.StopPrevious != nil {
			replacedBy[p.Previous.ID] = true
		}
	}
	d := gp.decisions
	for _, id := range d.order {
		x := d.byID[id]
		switch {
		case replacedBy[id] && x.stop == nil && !x.disconnect:
			continue
		case x.stop != nil:
			s := *x.stop
			s.Alloc = x.alloc
			res.Stops = append(res.Stops, s)
			du.Stop++
		case x.disconnect:
			res.Disconnects = append(res.Disconnects, Disconnect{Alloc: x.alloc, FollowupEvalID: x.followup})
			du.Disconnect++
		case x.update != 0:
			res.Updates = append(res.Updates, Update{Alloc: x.alloc, Kind: x.update})
			if x.update&UpdateInPlace != 0 {
				du.InPlaceUpdate++
			}
		default:
			continue
		}
		touched[id] = true
	}
	for _, a := range gp.kept {
		res.Keep = append(res.Keep, d.current(a))
	}
	du.Reconnect = uint64(len(gp.reconnected))
	du.RescheduleLater = uint64(len(gp.delayed))
	for _, p := range gp.places {
		res.Places = append(res.Places, p)
		switch p.Reason {
		case PlaceMigrate:
			du.Migrate++
		case PlaceDestructive:
			du.DestructiveUpdate++
		case PlaceReschedule:
			du.RescheduleNow++
			du.Place++
		default:
			du.Place++
		}
		if p.Previous != nil {
			touched[p.Previous.ID] = true
		}
	}
	total := 0
	for k := Untainted; k <= Ignore; k++ {
		total += len(gp.buckets.Get(k))
	}
	du.Ignore = uint64(total - len(touched))
}

// planStopAll stops every alloc of a group that is not already finished:
// the job was stopped or deleted, or the group was removed from it. Allocs
// on disconnected nodes are stopped too (they stop when their client comes
// back); allocs on down or deleted nodes are marked lost.
func planStopAll(name string, allocs []*structs.Allocation, nodes map[string]*structs.Node, c Classifier, desc string) *groupPlan {
	b := SortInto(allocs, nodes, c)
	gp := &groupPlan{name: name, buckets: b, decisions: newDecisions()}
	for k := Untainted; k <= Ignore; k++ {
		for _, a := range b.Get(k) {
			if a.TerminalStatus() {
				continue
			}
			n := nodes[a.NodeID]
			gp.decisions.stop(a, desc, n == nil || n.Status == structs.NodeStatusDown)
		}
	}
	return gp
}

// cancelTimeouts cancels the pending disconnect-timeout evals of allocs
// that reconnected in this result, unless another alloc still waits on the
// same eval.
func cancelTimeouts(in Input, plans []*groupPlan, pending map[string]*structs.Evaluation) []*structs.Evaluation {
	reconnected := map[string]bool{}
	var candidates []string
	for _, gp := range plans {
		for _, r := range gp.reconnected {
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
