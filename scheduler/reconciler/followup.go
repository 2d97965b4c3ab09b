package reconciler

import (
	"sort"
	"time"

	"github.com/drover-sched/drover/structs"
)

// followupWindow batches follow-up evaluations: allocs due within this long
// of the first of a batch share one eval, due at the latest of them, instead
// of one eval each.
const followupWindow = 5 * time.Second

// due is an alloc that needs an evaluation at a time.
type due struct {
	allocID string
	at      time.Time
}

// dueOf makes a due item for alloc a.
func dueOf(a *structs.Allocation, at time.Time) due { return due{allocID: a.ID, at: at} }

// batchDue groups due items into windows and returns, for each window, the
// time the eval should wait until, and for each alloc the window it is in.
func batchDue(items []due) (waits []time.Time, windowOf map[string]int) {
	sorted := append([]due(nil), items...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if !sorted[i].at.Equal(sorted[j].at) {
			return sorted[i].at.Before(sorted[j].at)
		}
		return sorted[i].allocID < sorted[j].allocID
	})
	windowOf = make(map[string]int, len(items))
	var start time.Time
	for _, d := range sorted {
		if len(waits) == 0 || d.at.Sub(start) > followupWindow {
			start = d.at
			waits = append(waits, d.at)
		}
		waits[len(waits)-1] = d.at
		windowOf[d.allocID] = len(waits) - 1
	}
	return waits, windowOf
}

// followupEval makes a pending eval of the job that waits until waitUntil.
func followupEval(id string, parent *structs.Evaluation, job *structs.Job, trigger string, waitUntil, now time.Time) *structs.Evaluation {
	e := &structs.Evaluation{
		ID:           id,
		Namespace:    parent.Namespace,
		Priority:     parent.Priority,
		Type:         parent.Type,
		TriggeredBy:  trigger,
		JobID:        parent.JobID,
		Status:       structs.EvalStatusPending,
		WaitUntil:    waitUntil,
		Wait:         waitUntil.Sub(now),
		PreviousEval: parent.ID,
		CreateTime:   now.UnixNano(),
		ModifyTime:   now.UnixNano(),
	}
	if job != nil {
		e.JobModifyIndex = job.JobModifyIndex
		e.Priority = job.Priority
		e.Type = job.Type
	}
	if e.Wait < 0 {
		e.Wait = 0
	}
	return e
}

// uncovered drops the items that a pending eval of the job (other than the
// one being processed) already covers: one with the same trigger due
// within followupWindow after the item, as makeFollowups would have made
// it. An item is checked on every evaluation but cannot be linked to its
// eval (its alloc is not written), so this keeps one eval per deadline.
func uncovered(items []due, evals []*structs.Evaluation, current string) []due {
	var waits []time.Time
	for _, e := range evals {
		if e.Status == structs.EvalStatusPending && e.ID != current && e.TriggeredBy == structs.EvalTriggerReconnectReportTimeout {
			waits = append(waits, e.WaitUntil)
		}
	}
	var out []due
	for _, it := range items {
		covered := false
		for _, w := range waits {
			if !w.Before(it.at) && w.Sub(it.at) <= followupWindow {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, it)
		}
	}
	return out
}

// makeFollowups creates one eval per window of items and returns them with
// the eval ID for each alloc.
func makeFollowups(items []due, parent *structs.Evaluation, job *structs.Job, trigger string, now time.Time, newID func() string) ([]*structs.Evaluation, map[string]string) {
	if len(items) == 0 {
		return nil, nil
	}
	waits, windowOf := batchDue(items)
	evals := make([]*structs.Evaluation, len(waits))
	for i, w := range waits {
		evals[i] = followupEval(newID(), parent, job, trigger, w, now)
	}
	ids := make(map[string]string, len(items))
	for allocID, w := range windowOf {
		ids[allocID] = evals[w].ID
	}
	return evals, ids
}
