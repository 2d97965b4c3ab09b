package nomad

import (
	"fmt"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/scheduler"
	"github.com/drover-sched/drover/structs"
)

// Plan is a dry run of a job change: the scheduler runs against a private
// copy of the state with the proposed job written into it, and the plan it
// would submit is reported instead of committed. Nothing is written.
func (j *Job) Plan(args *structs.JobPlanRequest, reply *structs.JobPlanResponse) error {
	if done, err := j.srv.forward("Job.Plan", args, args, reply); done {
		return err
	}
	if _, err := j.srv.allowNamespaceOp(args, planNamespace(args), acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityPlanJob); err != nil {
		return err
	}
	job, err := j.srv.admitJob(args.Job, planNamespace(args))
	if err != nil {
		return err
	}
	snap, err := j.srv.State().Snapshot()
	if err != nil {
		return err
	}
	existing, err := snap.JobByID(nil, job.Namespace, job.ID)
	if err != nil {
		return err
	}
	if existing != nil {
		reply.JobModifyIndex = existing.JobModifyIndex
	}
	reply.Warnings = memoryMaxWarning(j.srv.State(), job)
	if args.Diff {
		d, err := existing.Diff(job, true)
		if err != nil {
			return err
		}
		reply.Diff = d
	}
	if job.IsPeriodic() || job.IsParameterized() {
		reply.Annotations = &structs.PlanAnnotations{DesiredTGUpdates: map[string]*structs.DesiredUpdates{}}
		next, err := nextPeriodicLaunch(job, j.srv.Now())
		if err != nil {
			return errBadRequest("%v", err)
		}
		reply.NextPeriodicLaunch = next
		return nil
	}
	latest, err := snap.LatestIndex()
	if err != nil {
		return err
	}
	now := j.srv.Now()
	index := latest + 1
	if err := snap.Write(index, func(tx *state.Txn) error { return tx.UpsertJob(job) }); err != nil {
		return err
	}
	planned, err := snap.JobByID(nil, job.Namespace, job.ID)
	if err != nil {
		return err
	}
	eval := &structs.Evaluation{
		ID: structs.GenerateUUID(), Namespace: job.Namespace, Priority: job.Priority, Type: job.Type,
		TriggeredBy: structs.EvalTriggerJobRegister, JobID: job.ID, JobModifyIndex: planned.JobModifyIndex,
		Status: structs.EvalStatusPending, AnnotatePlan: true, CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
	}
	if err := snap.Write(index, func(tx *state.Txn) error { return tx.UpsertEvals([]*structs.Evaluation{eval}) }); err != nil {
		return err
	}
	planner := &dryRunPlanner{}
	sched, err := scheduler.NewScheduler(job.Type, scheduler.Config{
		Logger: j.srv.Logger().Named("plan"), State: snap, Planner: planner, Now: now,
	})
	if err != nil {
		return err
	}
	if err := sched.Process(eval); err != nil {
		return fmt.Errorf("planning job %q: %w", job.ID, err)
	}
	reply.Annotations = &structs.PlanAnnotations{DesiredTGUpdates: map[string]*structs.DesiredUpdates{}}
	if planner.plan != nil && planner.plan.Annotations != nil {
		reply.Annotations = planner.plan.Annotations
	}
	if planner.eval != nil {
		reply.FailedTGAllocs = planner.eval.FailedTGAllocs
	}
	reply.CreatedEvals = planner.created
	reply.Index = latest
	annotateDiff(reply.Diff, reply.Annotations)
	return nil
}

// planNamespace is the namespace a plan is checked in: its job's (the
// default one when the job names none), or the request's without a job.
func planNamespace(args *structs.JobPlanRequest) string {
	if args.Job == nil {
		return nsOrDefault(args.Namespace)
	}
	return nsOrDefault(args.Job.Namespace)
}

// annotateDiff copies the dry run's per-group counts into the diff, in the
// words `job plan` prints: (2 create, 1 in-place update).
func annotateDiff(d *structs.JobDiff, a *structs.PlanAnnotations) {
	if d == nil || a == nil {
		return
	}
	for _, tg := range d.TaskGroups {
		u := a.DesiredTGUpdates[tg.Name]
		if u == nil {
			continue
		}
		counts := map[string]uint64{
			"create": u.Place, "destroy": u.Stop, "migrate": u.Migrate, "ignore": u.Ignore,
			"in-place update": u.InPlaceUpdate, "create/destroy update": u.DestructiveUpdate,
			"canary": u.Canary, "reconnect": u.Reconnect, "disconnect": u.Disconnect,
			"reschedule now": u.RescheduleNow, "reschedule later": u.RescheduleLater,
		}
		tg.Updates = map[string]uint64{}
		for k, v := range counts {
			if v > 0 {
				tg.Updates[k] = v
			}
		}
	}
}

// dryRunPlanner records what a scheduler would do and commits nothing. It
// answers every plan as fully committed so the scheduler finishes its pass.
type dryRunPlanner struct {
	plan    *structs.Plan
	eval    *structs.Evaluation
	created []*structs.Evaluation
}

func (p *dryRunPlanner) SubmitPlan(plan *structs.Plan) (*structs.PlanResult, scheduler.State, error) {
	p.plan = plan
	return &structs.PlanResult{NodeUpdate: plan.NodeUpdate, NodeAllocation: plan.NodeAllocation, Deployment: plan.Deployment, DeploymentUpdates: plan.DeploymentUpdates}, nil, nil
}

func (p *dryRunPlanner) UpdateEval(e *structs.Evaluation) error { p.eval = e; return nil }
func (p *dryRunPlanner) CreateEval(e *structs.Evaluation) error {
	p.created = append(p.created, e)
	return nil
}
func (p *dryRunPlanner) ReblockEval(e *structs.Evaluation) error { return nil }

// Revert registers an earlier version of a job as its newest version.
func (j *Job) Revert(args *structs.JobRevertRequest, reply *structs.JobRegisterResponse) error {
	if done, err := j.srv.forward("Job.Revert", args, args, reply); done {
		return err
	}
	a, err := j.srv.allowNamespaceOp(args, args.Namespace, acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityRevertJob)
	if err != nil {
		return err
	}
	ns := nsOrDefault(args.Namespace)
	st := j.srv.State()
	cur, err := existingJob(st, ns, args.JobID)
	if err != nil {
		return err
	}
	if args.EnforcePriorVersion != nil && *args.EnforcePriorVersion != cur.Version {
		return errBadRequest("current job version is %d, not %d", cur.Version, *args.EnforcePriorVersion)
	}
	if args.JobVersion == cur.Version {
		return errBadRequest("cannot revert to the current version %d", cur.Version)
	}
	old, err := st.JobByIDAndVersion(nil, ns, args.JobID, args.JobVersion)
	if err != nil {
		return err
	}
	if old == nil {
		return fmt.Errorf("job %q version %d: %w", args.JobID, args.JobVersion, structs.ErrNotFound)
	}
	reg := &structs.JobRegisterRequest{Job: old.Copy(), WriteRequest: args.WriteRequest}
	reg.Job.Stop = false
	reg.Namespace = ns
	return j.register(reg, reply, a)
}

// Stable marks a job version stable (or not).
func (j *Job) Stable(args *structs.JobStabilityRequest, reply *structs.GenericResponse) error {
	if done, err := j.srv.forward("Job.Stable", args, args, reply); done {
		return err
	}
	if _, err := j.srv.allowNamespaceOp(args, args.Namespace, acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityStableJob); err != nil {
		return err
	}
	args.Namespace = nsOrDefault(args.Namespace)
	v, err := j.srv.State().JobByIDAndVersion(nil, args.Namespace, args.JobID, args.JobVersion)
	if err != nil {
		return err
	}
	if v == nil {
		return fmt.Errorf("job %q version %d: %w", args.JobID, args.JobVersion, structs.ErrNotFound)
	}
	return applyIndexed(j.srv, structs.JobStabilityRequestType, args, &reply.Index)
}
