package nomad

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// Scale changes one task group's count, as `job scale` and autoscalers do,
// or with a nil Count only records a scaling event. A count change is a
// registration of the job with the new count: a new version (if the count
// differs) and an evaluation, as Job.Register makes, written together with
// the scaling event in one raft entry. The request is checked here for a
// quick refusal and again by the FSM against the state it applies to, so
// a refused request changes nothing either way.
//
// As in Nomad: scaling a stopped job changes its count but leaves it
// stopped (the answer warns); periodic and parameterized jobs get no
// evaluation; a count change is refused while a deployment of the job is
// active; every request is refused while the scheduler configuration
// rejects job registration; PolicyOverride is ignored.
func (j *Job) Scale(args *structs.JobScaleRequest, reply *structs.JobRegisterResponse) error {
	if done, err := j.srv.forward("Job.Scale", args, args, reply); done {
		return err
	}
	a, err := j.srv.allowNamespaceOp(args, args.Namespace, acl.NamespaceCapabilityScaleJob, acl.NamespaceCapabilitySubmitJob)
	if err != nil {
		return err
	}
	if err := j.srv.checkJobRegistrationAllowed(a); err != nil {
		return err
	}
	ns := nsOrDefault(args.Namespace)
	if err := checkScaleRequest(args, ns); err != nil {
		return err
	}
	sc := state.JobScale{
		Namespace: ns, JobID: args.JobID, Group: args.Target[structs.ScalingTargetGroup],
		Count: args.Count, JobModifyIndex: args.JobModifyIndex,
	}
	job, err := j.srv.State().CheckJobScale(nil, sc)
	if err != nil {
		return scaleError(err)
	}
	if args.Count != nil {
		if err := j.srv.jobLimits().checkCounts(scaledJob(job, sc.Group, *args.Count)); err != nil {
			return err
		}
	}

	now := j.srv.Now().UnixNano()
	req := &structs.JobScaleApplyRequest{
		Namespace: ns, JobID: job.ID, Group: sc.Group, Count: args.Count, JobModifyIndex: args.JobModifyIndex,
		Event: &structs.ScalingEvent{
			Time: now, Count: args.Count, Message: args.Message, Error: args.Error, Meta: args.Meta,
			PreviousCount: int64(job.LookupTaskGroup(sc.Group).Count),
		},
		WriteRequest: args.WriteRequest,
	}
	if args.Count != nil {
		req.SubmitTime = now
		if !job.IsPeriodic() && !job.IsParameterized() {
			req.Eval = &structs.Evaluation{
				ID: structs.GenerateUUID(), Namespace: ns, Priority: job.Priority, Type: job.Type,
				TriggeredBy: structs.EvalTriggerScaling, JobID: job.ID, Status: structs.EvalStatusPending,
				CreateTime: now, ModifyTime: now,
			}
			req.Event.EvalID = &req.Eval.ID
		}
	}
	idx, _, err := j.srv.raftApply(structs.JobScaleRequestType, req)
	if err != nil {
		return scaleError(err)
	}
	reply.JobModifyIndex = job.JobModifyIndex
	if stored, err := j.srv.State().JobByID(nil, ns, job.ID); err == nil && stored != nil {
		reply.JobModifyIndex = stored.JobModifyIndex
	}
	if req.Eval != nil {
		reply.EvalID = req.Eval.ID
		reply.EvalCreateIndex = idx
	}
	if args.Count != nil && job.Stop {
		reply.Warnings = "job " + job.ID + " is stopped: its new count takes effect when it runs again"
	}
	reply.Index = idx
	return nil
}

// checkScaleRequest checks what a scaling request says by itself, before
// any job is looked at: the group it names, that a repeated job ID and
// namespace agree with the request's, that an error event carries no
// count, and that the event's Message and Meta are within their bounds.
func checkScaleRequest(args *structs.JobScaleRequest, ns string) error {
	if args.JobID == "" {
		return errBadRequest("job ID is missing")
	}
	if args.Target[structs.ScalingTargetGroup] == "" {
		return errBadRequest(`Target.Group is missing: name the task group to scale, as in {"Target": {"Group": "web"}}`)
	}
	if id := args.Target[structs.ScalingTargetJob]; id != "" && id != args.JobID {
		return errBadRequest("Target.Job %q does not match the job being scaled, %q", id, args.JobID)
	}
	if tns := args.Target[structs.ScalingTargetNamespace]; tns != "" && tns != ns {
		return errBadRequest("Target.Namespace %q does not match the request's namespace %q", tns, ns)
	}
	if args.Count != nil && args.Error {
		return errBadRequest("Count must not be set when Error is true: an error event records no count change")
	}
	if err := structs.CheckScalingEventSize(args.Message, args.Meta); err != nil {
		return errBadRequest("%v", err)
	}
	return nil
}

// scaleError marks the refusals a caller can fix as bad requests, so the
// HTTP API answers 400; a missing job stays a not-found and a stale
// conditional request an index conflict.
func scaleError(err error) error {
	var ve *structs.ValidationError
	if errors.As(err, &ve) || errors.Is(err, structs.ErrScalingBlocked) {
		// Both sentinels cross RPC: the HTTP API answers with Nomad's
		// text for a blocked scale.
		return fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	return err
}

// ScaleStatus reports each task group's desired count against its
// allocations, with the group's recent scaling events, in Nomad's shape.
// JobScaleStatus is nil if the job does not exist. It is a blocking query
// on the job, its allocations and its scaling events.
func (j *Job) ScaleStatus(args *structs.JobScaleStatusRequest, reply *structs.JobScaleStatusResponse) error {
	if done, err := j.srv.forward("Job.ScaleStatus", args, args, reply); done {
		return err
	}
	if _, err := j.srv.allowNamespaceOp(args, args.Namespace, acl.NamespaceCapabilityReadJobScaling, acl.NamespaceCapabilityReadJob); err != nil {
		return err
	}
	return j.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		ns := nsOrDefault(args.Namespace)
		job, err := st.JobByID(ws, ns, args.JobID)
		if err != nil {
			return 0, err
		}
		if job == nil {
			reply.JobScaleStatus = nil
			return maxIndex(st, state.TableJobs), nil
		}
		events, err := st.ScalingEventsByJob(ws, ns, job.ID)
		if err != nil {
			return 0, err
		}
		allocs, err := st.AllocsByJob(ws, ns, job.ID, false)
		if err != nil {
			return 0, err
		}
		status, index := jobScaleStatus(job, events, allocs)
		reply.JobScaleStatus = status
		return index, nil
	})
}

// jobScaleStatus counts allocs against job's groups and returns the
// status with the newest index among the job, its events and its allocs.
// Terminal allocations and canaries are not counted, as in Nomad.
func jobScaleStatus(job *structs.Job, events *structs.JobScalingEvents, allocs []*structs.Allocation) (*structs.JobScaleStatus, uint64) {
	out := &structs.JobScaleStatus{
		JobID: job.ID, Namespace: job.Namespace, JobCreateIndex: job.CreateIndex,
		JobModifyIndex: job.JobModifyIndex, JobStopped: job.Stop,
		TaskGroups: make(map[string]*structs.TaskGroupScaleStatus, len(job.TaskGroups)),
	}
	index := job.ModifyIndex
	for _, tg := range job.TaskGroups {
		s := &structs.TaskGroupScaleStatus{Desired: tg.Count, Events: []*structs.ScalingEvent{}}
		if events != nil && len(events.ScalingEvents[tg.Name]) > 0 {
			s.Events = events.ScalingEvents[tg.Name]
		}
		out.TaskGroups[tg.Name] = s
	}
	if events != nil {
		index = max(index, events.ModifyIndex)
	}
	for _, a := range allocs {
		index = max(index, a.ModifyIndex)
		if a.TerminalStatus() || (a.DeploymentStatus != nil && a.DeploymentStatus.Canary) {
			continue
		}
		s := out.TaskGroups[a.TaskGroup]
		if s == nil {
			continue
		}
		s.Placed++
		if a.ClientStatus == structs.AllocClientStatusRunning {
			s.Running++
		}
		if ds := a.DeploymentStatus; ds != nil && ds.Healthy != nil {
			if *ds.Healthy {
				s.Healthy++
			} else {
				s.Unhealthy++
			}
		}
	}
	return out, index
}

// scaledJob returns job as it would be with group's count set to count:
// a shallow copy that shares everything but the group list and the one
// group, enough to check the count bounds.
func scaledJob(job *structs.Job, group string, count int64) *structs.Job {
	c := *job
	c.TaskGroups = make([]*structs.TaskGroup, len(job.TaskGroups))
	for i, tg := range job.TaskGroups {
		if tg.Name == group {
			g := *tg
			g.Count = int(count)
			tg = &g
		}
		c.TaskGroups[i] = tg
	}
	return &c
}
