package reconciler

import (
	"maps"
	"slices"

	"github.com/drover-sched/drover/structs"
)

// rolloutView is what one evaluation knows about the job's deployments:
// which one the current job version is rolling out under, and which status
// changes the evaluation makes.
type rolloutView struct {
	// current is the deployment of the current job version, or nil (the
	// evaluation may then create one, see deploy).
	current *structs.Deployment
	// updates are status changes: an older version's deployment
	// cancelled, the current one completed.
	updates []*structs.DeploymentStatusUpdate
}

// viewRollout finds the deployment the current job version rolls out
// under. A deployment of an older version (or of an earlier incarnation of
// the job) that is still active is cancelled, and so is any active one of
// a stopped job; a successful one is done and no longer current.
func viewRollout(in Input) *rolloutView {
	v := &rolloutView{}
	d := in.Deployment
	if d == nil {
		return v
	}
	switch {
	case in.Job.Stopped():
		if d.Active() {
			v.cancel(d, structs.DeploymentStatusDescriptionStoppedJob)
		}
	case d.JobCreateIndex != in.Job.CreateIndex || d.JobVersion != in.Job.Version:
		if d.Active() {
			v.cancel(d, structs.DeploymentStatusDescriptionNewerJob)
		}
	case d.Status == structs.DeploymentStatusSuccessful:
	default:
		v.current = d
	}
	return v
}

func (v *rolloutView) cancel(d *structs.Deployment, desc string) {
	v.updates = append(v.updates, &structs.DeploymentStatusUpdate{
		DeploymentID: d.ID, Status: structs.DeploymentStatusCancelled, StatusDescription: desc,
	})
}

// group is the rollout as one task group sees it.
func (v *rolloutView) group(name string) groupRollout {
	g := groupRollout{}
	d := v.current
	if d == nil {
		return g
	}
	g.id = d.ID
	g.state = d.TaskGroups[name]
	switch d.Status {
	case structs.DeploymentStatusRunning, structs.DeploymentStatusPending:
		g.active = true
	case structs.DeploymentStatusPaused, structs.DeploymentStatusBlocked:
		g.active, g.halted = true, true
	default: // failed, cancelled: nothing more is placed for this version
		g.halted = true
	}
	return g
}

// groupRollout is the current deployment's part in one group's decisions.
type groupRollout struct {
	// id is the current deployment's ID, or "" when there is none.
	id string
	// state is the group's progress in it, or nil when the deployment
	// does not cover the group (or there is no deployment).
	state *structs.DeploymentState
	// active: new allocs join the deployment (running or paused).
	active bool
	// halted: the deployment is paused, failed or cancelled, so no new
	// version alloc is placed except to replace a lost or failed one.
	halted bool
}

// canarying reports whether the group waits for its canaries to be
// promoted.
func (g groupRollout) canarying() bool {
	return g.state != nil && g.state.DesiredCanaries > 0 && !g.state.Promoted
}

// promoted reports whether the group's canaries were promoted.
func (g groupRollout) promoted() bool { return g.state != nil && g.state.Promoted }

// isCanary reports whether a is a canary of the current deployment.
func (g groupRollout) isCanary(a *structs.Allocation) bool {
	if g.state == nil || a.DeploymentID != g.id {
		return false
	}
	for _, id := range g.state.PlacedCanaries {
		if id == a.ID {
			return true
		}
	}
	return a.DeploymentStatus != nil && a.DeploymentStatus.Canary
}

// health is how an alloc of the current version stands for pacing.
type health uint8

const (
	// settled: healthy, or not part of any rollout's pacing.
	settled health = iota
	// waiting: placed for the deployment, health not yet reported.
	waiting
	// unhealthy: reported unhealthy; the rollout makes no progress.
	unhealthy
)

// healthOf says whether a current-version alloc is still in flight. An
// alloc of the current deployment is in flight until its client reports it
// healthy; one it reported unhealthy stops progress. An unknown alloc (its
// node is away) is neither: it is not unhealthy for being unreachable, and
// its health is decided when it reconnects. An alloc of no deployment (the
// job had no update block when it was placed) is in flight while it is a
// pending replacement, which is how rolling updates were paced without
// health.
func (g groupRollout) healthOf(a *structs.Allocation) health {
	if a.ClientStatus == structs.AllocClientStatusUnknown {
		return settled
	}
	if g.id != "" && a.DeploymentID == g.id {
		switch {
		case a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil:
			return waiting
		case !*a.DeploymentStatus.Healthy:
			return unhealthy
		}
		return settled
	}
	if a.DeploymentID == "" && a.ClientStatus == structs.AllocClientStatusPending && a.PreviousAllocation != "" {
		return waiting
	}
	return settled
}

// healthy reports whether a is a live, healthy alloc of the current
// deployment: one that counts toward the group's DesiredTotal.
func (g groupRollout) healthy(a *structs.Allocation) bool {
	return g.id != "" && a.DeploymentID == g.id && !a.TerminalStatus() &&
		a.ClientStatus != structs.AllocClientStatusUnknown &&
		a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil && *a.DeploymentStatus.Healthy
}

// newDeployment is the deployment a job version rolls out under, created
// at now with a deterministic ID. Its groups are added by the groups that
// need it.
func newDeployment(id string, job *structs.Job, priority int, now int64) *structs.Deployment {
	return &structs.Deployment{
		ID:                 id,
		Namespace:          job.Namespace,
		JobID:              job.ID,
		JobVersion:         job.Version,
		JobModifyIndex:     job.JobModifyIndex,
		JobSpecModifyIndex: job.JobModifyIndex,
		JobCreateIndex:     job.CreateIndex,
		TaskGroups:         map[string]*structs.DeploymentState{},
		Status:             structs.DeploymentStatusRunning,
		StatusDescription:  structs.DeploymentStatusDescriptionRunning,
		EvalPriority:       priority,
		CreateTime:         now,
		ModifyTime:         now,
	}
}

// describeNew words a new deployment's status: one whose canaries wait
// for an operator says so, as Nomad's does.
func describeNew(d *structs.Deployment) {
	for _, name := range slices.Sorted(maps.Keys(d.TaskGroups)) {
		st := d.TaskGroups[name]
		if st.DesiredCanaries == 0 {
			continue
		}
		if !st.AutoPromote {
			d.StatusDescription = structs.DeploymentStatusDescriptionRunningNeedsPromotion
			return
		}
		d.StatusDescription = structs.DeploymentStatusDescriptionRunningAutoPromotion
	}
}

// groupDeploymentState is a group's state in a new deployment.
func groupDeploymentState(tg *structs.TaskGroup, desiredTotal, canaries int) *structs.DeploymentState {
	u := tg.Update
	return &structs.DeploymentState{
		AutoRevert:       u.AutoRevert,
		AutoPromote:      u.AutoPromote,
		ProgressDeadline: u.ProgressDeadline,
		DesiredTotal:     desiredTotal,
		DesiredCanaries:  canaries,
	}
}

// hadVersion reports whether any alloc of the group ever ran the job's
// current version: a version that already ran needs no deployment to
// replace a lost or failed alloc (Nomad does the same).
func hadVersion(job *structs.Job, allocs []*structs.Allocation) bool {
	for _, a := range allocs {
		if a.Job != nil && a.Job.Version == job.Version && a.Job.CreateIndex == job.CreateIndex {
			return true
		}
	}
	return false
}

// groupDeploy is what one group asks of the job's deployment.
type groupDeploy struct {
	// create is the group's state in a deployment this evaluation
	// creates, or nil when the group needs none.
	create *structs.DeploymentState
	// done: the group has nothing left to roll out under the current
	// deployment (or the deployment does not cover it).
	done bool
}

// deployNeeds says whether the group's decisions need a new deployment
// and whether its part of the current one is done.
//
// A rolling group of a service job needs a deployment when its version
// places allocs: destructive updates of older ones, or a first run (no
// alloc ever ran this version). Replacing a lost or failed alloc of a
// version that already ran needs none, and in-place updates are not paced.
// Its DesiredTotal is the allocs the version places: the new ones plus
// every alloc that needs a destructive update (now or later).
//
// The group is done when nothing is left to place, defer or reschedule,
// no canaries await promotion, and DesiredTotal live allocs of the
// deployment are healthy.
func deployNeeds(in groupInput, up rollout, delayed int, canaries []*holder, decided *decisions) groupDeploy {
	u := in.tg.Update
	if in.batch || !u.Rolling() {
		return groupDeploy{done: true}
	}
	fresh := 0
	for _, p := range up.places {
		if p.Reason != PlaceDestructive && !p.Canary {
			fresh++
		}
	}
	r := in.rollout
	var g groupDeploy
	if r.id == "" && (up.candidates > 0 || (fresh > 0 && !hadVersion(in.job, in.allocs))) {
		desiredCanaries := 0
		if up.canarying {
			desiredCanaries = up.canaries
		}
		g.create = groupDeploymentState(in.tg, fresh+up.candidates, desiredCanaries)
	}
	st := r.state
	if st == nil {
		g.done = g.create == nil
		return g
	}
	if len(up.places) > 0 || up.deferred > 0 || delayed > 0 || up.canarying || len(canaries) > 0 {
		return g
	}
	healthy := 0
	for _, a := range in.allocs {
		if !decided.stopped(a) && r.healthy(decided.current(a)) {
			healthy++
		}
	}
	// Canaries were promoted (or there are none), so DesiredTotal is the
	// whole of it: a promoted canary beyond the count was given up with
	// its slot and need not stay healthy.
	g.done = healthy >= st.DesiredTotal
	return g
}
