package deploymentwatcher

import (
	"strconv"
	"time"

	"github.com/drover-sched/drover/structs"
)

// This file holds the decisions about one deployment that the watcher
// and the server's deployment endpoints share (Eval, FailureRequest).
// Each reads the state store (never writes) and takes the time and a
// source of IDs as arguments, so it is the same decision wherever it runs
// and a test can give it a fixed clock.

// deploymentAllocHealth summarises a deployment's allocs.
type deploymentAllocHealth struct {
	// unhealthy counts allocs whose health is known to be bad. An alloc
	// the servers marked unknown (its node is disconnected) is left out:
	// its client may come back with it healthy, and the disconnect block,
	// not the deployment, decides what happens to it meanwhile.
	unhealthy int
	// healthyCanaries counts the healthy canaries of each group.
	healthyCanaries map[string]int
}

func summariseAllocHealth(d *structs.Deployment, allocs []*structs.Allocation) deploymentAllocHealth {
	h := deploymentAllocHealth{healthyCanaries: map[string]int{}}
	canary := map[string]bool{}
	for _, st := range d.TaskGroups {
		for _, id := range st.PlacedCanaries {
			canary[id] = true
		}
	}
	for _, a := range allocs {
		if a.DeploymentID != d.ID || a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil {
			continue
		}
		healthy := *a.DeploymentStatus.Healthy
		switch {
		case !healthy && a.ClientStatus != structs.AllocClientStatusUnknown:
			h.unhealthy++
		case healthy && canary[a.ID] && !a.TerminalStatus():
			h.healthyCanaries[a.TaskGroup]++
		}
	}
	return h
}

// awaitingPromotion reports whether a group's canaries are all healthy and
// it waits only for a promotion. The progress deadline does not run out on
// an operator who takes their time to promote.
func awaitingPromotion(st *structs.DeploymentState, healthyCanaries int) bool {
	return st.DesiredCanaries > 0 && !st.Promoted && healthyCanaries >= st.DesiredCanaries
}

// groupDone reports whether a group has nothing left to deploy.
func groupDone(st *structs.DeploymentState) bool {
	return st.HealthyAllocs >= st.DesiredTotal && (st.DesiredCanaries == 0 || st.Promoted)
}

// progressCutoff is when a group must next have made progress, or the
// zero time when no deadline applies to it. A group that has seen no
// healthy alloc yet counts from the deployment's creation.
func progressCutoff(d *structs.Deployment, st *structs.DeploymentState, healthyCanaries int) time.Time {
	if st.ProgressDeadline <= 0 || groupDone(st) || awaitingPromotion(st, healthyCanaries) {
		return time.Time{}
	}
	if !st.RequireProgressBy.IsZero() {
		return st.RequireProgressBy
	}
	if d.CreateTime == 0 {
		return time.Time{}
	}
	return time.Unix(0, d.CreateTime).Add(st.ProgressDeadline)
}

// nextProgressCutoff is the earliest progress deadline of d's groups, or
// the zero time.
func nextProgressCutoff(d *structs.Deployment, h deploymentAllocHealth) time.Time {
	var next time.Time
	for name, st := range d.TaskGroups {
		c := progressCutoff(d, st, h.healthyCanaries[name])
		if !c.IsZero() && (next.IsZero() || c.Before(next)) {
			next = c
		}
	}
	return next
}

// canAutoPromote reports whether every group that waits for promotion asks
// for auto_promote and has all its canaries healthy (as Nomad, one group
// without auto_promote holds back the others).
func canAutoPromote(d *structs.Deployment, h deploymentAllocHealth) bool {
	waiting := 0
	for name, st := range d.TaskGroups {
		if st.DesiredCanaries == 0 || st.Promoted {
			continue
		}
		if !st.AutoPromote || !awaitingPromotion(st, h.healthyCanaries[name]) {
			return false
		}
		waiting++
	}
	return waiting > 0
}

// Eval is the eval that moves a deployment's job on: the watcher's after
// a health change, and the one that comes with a promotion, a failure, a
// resume or an unblock. job may be nil (it was purged).
func Eval(job *structs.Job, d *structs.Deployment, now time.Time, id string) *structs.Evaluation {
	priority := d.EvalPriority
	if priority == 0 && job != nil {
		priority = job.Priority
	}
	e := &structs.Evaluation{
		ID: id, Namespace: d.Namespace, Priority: priority, Type: structs.JobTypeService,
		TriggeredBy: structs.EvalTriggerDeploymentWatcher, JobID: d.JobID, DeploymentID: d.ID,
		Status: structs.EvalStatusPending, CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
	}
	if job != nil {
		e.Type, e.JobModifyIndex = job.Type, job.JobModifyIndex
	}
	return e
}

// FailureRequest builds the raft entry that fails d with description
// base: the status change, the eval that stops the rollout, and, when a
// group asks for auto_revert, the newest stable earlier version of the job
// registered again as a new version. The description says which version it
// rolls back to, or why it does not. revertedTo is that version, or nil.
func FailureRequest(st JobReader, d *structs.Deployment, base string, now time.Time, newID func() string) (
	req *structs.DeploymentStatusUpdateRequest, revertedTo *uint64, err error) {
	job, err := st.JobByID(nil, d.Namespace, d.JobID)
	if err != nil {
		return nil, nil, err
	}
	desc := base
	var revert *structs.Job
	if wantsAutoRevert(d) && job != nil && job.Version == d.JobVersion && !job.Stop {
		stable, err := latestStableVersion(st, job)
		if err != nil {
			return nil, nil, err
		}
		switch {
		case stable == nil:
			desc = structs.DeploymentStatusDescriptionNoRollbackTarget(base)
		case !stable.SpecChanged(job):
			desc = base + " - not rolling back to stable job version " + strconv.FormatUint(stable.Version, 10) + " as current job has same specification"
		default:
			revert = stable.Copy()
			revert.Stable, revert.Stop = false, false
			revert.SubmitTime = now.UnixNano()
			v := stable.Version
			revertedTo = &v
			desc = structs.DeploymentStatusDescriptionRollback(base, v)
		}
	}
	return &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: d.ID, Status: structs.DeploymentStatusFailed, StatusDescription: desc},
		Job:              revert,
		Eval:             Eval(job, d, now, newID()),
		UpdatedAt:        now.UnixNano(),
	}, revertedTo, nil
}

func wantsAutoRevert(d *structs.Deployment) bool {
	for _, st := range d.TaskGroups {
		if st.AutoRevert {
			return true
		}
	}
	return false
}

// latestStableVersion is the newest stable version of job other than its
// current one, or nil.
func latestStableVersion(st JobReader, job *structs.Job) (*structs.Job, error) {
	versions, err := st.JobVersionsByID(nil, job.Namespace, job.ID)
	if err != nil {
		return nil, err
	}
	for _, v := range versions { // newest first
		if v.Stable && v.Version != job.Version {
			return v, nil
		}
	}
	return nil, nil
}
