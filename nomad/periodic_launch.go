package nomad

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// dueLaunch is one launch the loop took from tracked.
type dueLaunch struct {
	key structs.NamespacedID
	at  time.Time
}

// run is the dispatcher's loop: it launches every due job, then waits for
// the earliest next launch or for tracked to change. It owns the timer.
func (d *PeriodicDispatch) run(ctx context.Context) {
	for {
		due, next := d.takeDue(d.cfg.Clock.Now())
		for _, l := range due {
			if ctx.Err() != nil {
				return
			}
			_, err := d.launch(l.key.Namespace, l.key.ID, l.at, false)
			switch {
			case errors.Is(err, ErrPeriodicNotTracked):
				// Stopped or changed between takeDue and now; its hook
				// untracks or re-tracks it.
			case err != nil:
				d.logger.Error("periodic launch failed", "job", l.key.String(), "launch", l.at, "error", err)
			}
		}
		var fire <-chan time.Time
		var timer clock.Timer
		if !next.IsZero() {
			if !next.After(d.cfg.Clock.Now()) {
				continue
			}
			timer = d.cfg.Clock.NewTimerAt(next)
			fire = timer.C()
		}
		select {
		case <-ctx.Done():
		case <-d.wake:
		case <-fire:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// takeDue moves every job whose launch is due at now past it, and returns
// those launches (the newest missed launch of each job, in time order) and
// the earliest launch still ahead.
func (d *PeriodicDispatch) takeDue(now time.Time) (due []dueLaunch, next time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for key, e := range d.tracked {
		if !e.next.IsZero() && !e.next.After(now) {
			at := e.schedule.latest(e.next, now)
			due = append(due, dueLaunch{key: key, at: at})
			e.next = e.schedule.next(at)
		}
		if !e.next.IsZero() && (next.IsZero() || e.next.Before(next)) {
			next = e.next
		}
	}
	sort.Slice(due, func(i, j int) bool {
		if !due[i].at.Equal(due[j].at) {
			return due[i].at.Before(due[j].at)
		}
		return due[i].key.String() < due[j].key.String()
	})
	return due, next
}

// launch registers the child of the parent's launch at `at` with a pending
// evaluation, through raft, exactly as Job.Register registers a job. The
// parent is read afresh from state: it may have been stopped or changed
// since it was taken off the schedule. With prohibit_overlap, a scheduled
// (not forced) launch is skipped, returning nil, nil, while an earlier
// child has not finished. The eval's ID and times are made here, never in
// the FSM (promise 5).
func (d *PeriodicDispatch) launch(namespace, jobID string, at time.Time, force bool) (*structs.Evaluation, error) {
	st := d.cfg.State()
	parent, err := st.JobByID(nil, namespace, jobID)
	if err != nil {
		return nil, err
	}
	if parent == nil || !parent.IsPeriodic() || parent.Stopped() || parent.IsParameterized() {
		return nil, ErrPeriodicNotTracked
	}
	if !force && parent.Periodic.ProhibitOverlap {
		running, err := unfinishedChild(st, parent)
		if err != nil {
			return nil, err
		}
		if running != "" {
			d.logger.Info("skipping periodic launch: previous child has not finished (prohibit_overlap)",
				"job", jobID, "launch", at, "child", running)
			return nil, nil
		}
	}
	child := deriveChild(parent, at)
	if existing, err := st.JobByID(nil, namespace, child.ID); err != nil {
		return nil, err
	} else if existing != nil {
		return nil, fmt.Errorf("%s: %w", child.ID, errChildExists)
	}
	now := d.cfg.Clock.Now()
	eval := &structs.Evaluation{
		ID: structs.GenerateUUID(), Namespace: child.Namespace, Priority: child.Priority, Type: child.Type,
		TriggeredBy: structs.EvalTriggerPeriodicJob, JobID: child.ID, Status: structs.EvalStatusPending,
		CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
	}
	idx, err := d.cfg.Register(&structs.JobRegisterRequest{Job: child, Eval: eval})
	if err != nil {
		return nil, fmt.Errorf("registering periodic child %s: %w", child.ID, err)
	}
	d.logger.Info("launched periodic job", "job", jobID, "child", child.ID, "eval", eval.ID, "forced", force)
	if stored, err := d.cfg.State().EvalByID(nil, eval.ID); err == nil && stored != nil {
		return stored, nil
	}
	eval.CreateIndex, eval.ModifyIndex = idx, idx
	return eval, nil
}

// unfinishedChild returns the ID of a child of parent that is not dead
// (pending or running), or "".
func unfinishedChild(st *state.StateStore, parent *structs.Job) (string, error) {
	children, err := periodicChildren(st, parent)
	if err != nil {
		return "", err
	}
	for _, c := range children {
		if c.Status != structs.JobStatusDead {
			return c.ID, nil
		}
	}
	return "", nil
}
