package nomad

import (
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/nomad/fsm"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// Job registers, stops and reads jobs. Each method checks the request's
// token for the namespace capability Nomad asks for (see acl_check.go);
// a job is checked against the namespace it goes into.
type Job struct {
	srv jobServer
}

// jobServer is what Job uses of the server: besides the shared pieces,
// the admission of a job (job_admit.go), its limits, the scheduler
// configuration's refusal of registrations, and the periodic dispatcher's
// forced launch.
type jobServer interface {
	rpcForwarder
	namespaceChecker
	blockingQuerier
	stateReader
	Now() time.Time
	raftApplier
	Logger() hclog.Logger
	admitJob(job *structs.Job, ns string) (*structs.Job, error)
	checkJobRegistrationAllowed(a *acl.ACL) error
	jobLimits() jobLimits
	periodicLauncher() periodicLauncher
}

// periodicLauncher launches a periodic job's child now (PeriodicDispatch).
type periodicLauncher interface {
	ForceRun(namespace, jobID string) (*structs.Evaluation, error)
}

func (s *Server) periodicLauncher() periodicLauncher { return s.periodicDispatcher }

var _ jobServer = (*Server)(nil)

// Register validates a job, then writes it and its evaluation in one raft
// entry. With EnforceIndex the write only happens if the job's current
// JobModifyIndex is JobModifyIndex (0: the job must not exist). It needs
// submit-job (or register-job) in the job's namespace.
func (j *Job) Register(args *structs.JobRegisterRequest, reply *structs.JobRegisterResponse) error {
	if done, err := j.srv.forward("Job.Register", args, args, reply); done {
		return err
	}
	a, err := j.srv.allowNamespaceOp(args, registerNamespace(args), acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityRegisterJob)
	if err != nil {
		return err
	}
	return j.register(args, reply, a)
}

// registerNamespace is the namespace a registration writes the job into:
// the job's own, or the request's when the job is in the default one.
func registerNamespace(args *structs.JobRegisterRequest) string {
	ns := structs.DefaultNamespace
	if args.Job != nil && args.Job.Namespace != "" {
		ns = args.Job.Namespace
	}
	if args.Namespace != "" && args.Namespace != ns && ns == structs.DefaultNamespace {
		ns = args.Namespace
	}
	return ns
}

// register is Register once the token is checked (Revert checks its own
// capability and calls it too); a is the caller's ACL.
func (j *Job) register(args *structs.JobRegisterRequest, reply *structs.JobRegisterResponse, a *acl.ACL) error {
	if err := j.srv.checkJobRegistrationAllowed(a); err != nil {
		return err
	}
	// The namespace the job goes into is validated with the rest: the
	// request's may differ from the job's own.
	job, err := j.srv.admitJob(args.Job, registerNamespace(args))
	if err != nil {
		return err
	}
	if err := checkHostVolumeACL(a, job); err != nil {
		return err
	}
	st := j.srv.State()
	existing, err := st.JobByID(nil, job.Namespace, job.ID)
	if err != nil {
		return err
	}
	// A fast refusal without a raft write; the FSM makes the binding check.
	if args.EnforceIndex {
		if err := fsm.CheckJobModifyIndex(existing, args.JobModifyIndex); err != nil {
			return err
		}
	}
	if existing != nil && existing.Type != job.Type {
		return errBadRequest("job %q is a %s job; its type cannot change to %s (stop and purge it first)", job.ID, existing.Type, job.Type)
	}
	if args.PreserveCounts && existing != nil {
		for _, tg := range job.TaskGroups {
			if old := existing.LookupTaskGroup(tg.Name); old != nil {
				tg.Count = old.Count
			}
		}
	}
	now := j.srv.Now()
	job.SubmitTime = now.UnixNano()
	// The check-and-set expectation travels in the entry: the FSM decides,
	// so two racing registrations cannot both win.
	req := &structs.JobRegisterRequest{Job: job, EnforceIndex: args.EnforceIndex, JobModifyIndex: args.JobModifyIndex, WriteRequest: args.WriteRequest}
	if !job.IsPeriodic() && !job.IsParameterized() {
		req.Eval = &structs.Evaluation{
			ID: structs.GenerateUUID(), Namespace: job.Namespace, Priority: job.Priority, Type: job.Type,
			TriggeredBy: structs.EvalTriggerJobRegister, JobID: job.ID, Status: structs.EvalStatusPending,
			CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
		}
	}
	idx, _, err := j.srv.raftApply(structs.JobRegisterRequestType, req)
	if err != nil {
		return err
	}
	stored, err := j.srv.State().JobByID(nil, job.Namespace, job.ID)
	if err != nil {
		return err
	}
	if stored != nil {
		reply.JobModifyIndex = stored.JobModifyIndex
	}
	if req.Eval != nil {
		reply.EvalID = req.Eval.ID
		reply.EvalCreateIndex = idx
	}
	reply.Index = idx
	reply.Warnings = memoryMaxWarning(j.srv.State(), job)
	return nil
}

// Deregister stops a job (its allocations are stopped by the evaluation it
// creates) or, with Purge, deletes it. It needs submit-job (or
// deregister-job, purge-job to purge).
func (j *Job) Deregister(args *structs.JobDeregisterRequest, reply *structs.JobDeregisterResponse) error {
	if done, err := j.srv.forward("Job.Deregister", args, args, reply); done {
		return err
	}
	finer := acl.NamespaceCapabilityDeregisterJob
	if args.Purge {
		finer = acl.NamespaceCapabilityPurgeJob
	}
	job, err := j.jobToChange(args, args.Namespace, args.JobID, finer)
	if err != nil {
		return err
	}
	ns := nsOrDefault(args.Namespace)
	now := j.srv.Now()
	req := &structs.JobDeregisterRequest{JobID: job.ID, Purge: args.Purge, SubmitTime: now.UnixNano(), WriteRequest: args.WriteRequest}
	req.Namespace = ns
	if !job.IsPeriodic() && !job.IsParameterized() {
		req.Eval = &structs.Evaluation{
			ID: structs.GenerateUUID(), Namespace: ns, Priority: job.Priority, Type: job.Type,
			TriggeredBy: structs.EvalTriggerJobDeregister, JobID: job.ID, JobModifyIndex: job.JobModifyIndex,
			Status: structs.EvalStatusPending, CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
		}
	}
	idx, _, err := j.srv.raftApply(structs.JobDeregisterRequestType, req)
	if err != nil {
		return err
	}
	if req.Eval != nil {
		reply.EvalID = req.Eval.ID
		reply.EvalCreateIndex = idx
	}
	reply.JobModifyIndex = idx
	reply.Index = idx
	return nil
}

// Evaluate creates a new evaluation for a job (`job eval`). It needs
// submit-job (or evaluate-job).
func (j *Job) Evaluate(args *structs.JobEvaluateRequest, reply *structs.JobRegisterResponse) error {
	if done, err := j.srv.forward("Job.Evaluate", args, args, reply); done {
		return err
	}
	if _, err := j.srv.allowNamespaceOp(args, args.Namespace, acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityEvaluateJob); err != nil {
		return err
	}
	ns := nsOrDefault(args.Namespace)
	job, err := existingJob(j.srv.State(), ns, args.JobID)
	if err != nil {
		return err
	}
	if job.IsPeriodic() || job.IsParameterized() {
		return errBadRequest("job %q is periodic or parameterized and cannot be evaluated directly", job.ID)
	}
	now := j.srv.Now()
	eval := &structs.Evaluation{
		ID: structs.GenerateUUID(), Namespace: ns, Priority: job.Priority, Type: job.Type,
		TriggeredBy: structs.EvalTriggerJobRegister, JobID: job.ID, JobModifyIndex: job.JobModifyIndex,
		Status: structs.EvalStatusPending, CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
	}
	idx, _, err := j.srv.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval}})
	if err != nil {
		return err
	}
	reply.EvalID, reply.EvalCreateIndex, reply.JobModifyIndex, reply.Index = eval.ID, idx, job.JobModifyIndex, idx
	return nil
}

// jobToChange is the job a Deregister or a periodic force names, once the
// token is found to have submit-job or the finer capability in the
// request's namespace ns. The job must exist, and the request must name
// it.
func (j *Job) jobToChange(info structs.RPCInfo, ns, id, finer string) (*structs.Job, error) {
	if _, err := j.srv.allowNamespaceOp(info, ns, acl.NamespaceCapabilitySubmitJob, finer); err != nil {
		return nil, err
	}
	if id == "" {
		return nil, errBadRequest("job ID is missing")
	}
	return existingJob(j.srv.State(), nsOrDefault(ns), id)
}

// existingJob is the job id in namespace ns, or ErrNotFound naming it:
// the calls that act on a job (deregister, evaluate, revert, force a
// periodic launch) refuse one that does not exist.
func existingJob(st *state.StateStore, ns, id string) (*structs.Job, error) {
	job, err := st.JobByID(nil, ns, id)
	if err != nil {
		return nil, err
	}
	if job == nil {
		return nil, fmt.Errorf("job %q: %w", id, structs.ErrNotFound)
	}
	return job, nil
}

func nsOrDefault(ns string) string {
	if ns == "" {
		return structs.DefaultNamespace
	}
	return ns
}

// GetJob returns one job.
func (j *Job) GetJob(args *structs.JobSpecificRequest, reply *structs.SingleJobResponse) error {
	if done, err := j.srv.forward("Job.GetJob", args, args, reply); done {
		return err
	}
	if _, err := j.srv.allowNamespaceOp(args, args.Namespace, acl.NamespaceCapabilityReadJob); err != nil {
		return err
	}
	return j.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		job, err := st.JobByID(ws, nsOrDefault(args.Namespace), args.JobID)
		if err != nil {
			return 0, err
		}
		reply.Job = job
		if job != nil {
			return job.ModifyIndex, nil
		}
		return maxIndex(st, state.TableJobs), nil
	})
}

// List returns job stubs with their summaries, filtered by ID prefix and
// to the namespaces where the token has list-jobs (with namespace "*",
// every such namespace).
func (j *Job) List(args *structs.JobListRequest, reply *structs.JobListResponse) error {
	if done, err := j.srv.forward("Job.List", args, args, reply); done {
		return err
	}
	scope, err := listScopeFor(j.srv, args, &args.QueryOptions, acl.NamespaceCapabilityListJobs)
	if err != nil {
		return err
	}
	return j.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		it, err := st.Jobs(ws)
		if err != nil {
			return 0, err
		}
		out := []*structs.JobListStub{}
		for _, job := range collect(it, scope, func(j *structs.Job) (string, string) { return j.Namespace, j.ID }) {
			summary, err := st.JobSummaryByID(ws, job.Namespace, job.ID)
			if err != nil {
				return 0, err
			}
			out = append(out, job.Stub(summary))
		}
		if reply.Jobs, err = jobStubPager.page(&args.QueryOptions, &reply.QueryMeta, out); err != nil {
			return 0, err
		}
		return maxIndex(st, state.TableJobs, state.TableJobSummary), nil
	})
}

// Summary returns a job's allocation counts by group.
func (j *Job) Summary(args *structs.JobSpecificRequest, reply *structs.JobSummaryResponse) error {
	if done, err := j.srv.forward("Job.Summary", args, args, reply); done {
		return err
	}
	if _, err := j.srv.allowNamespaceOp(args, args.Namespace, acl.NamespaceCapabilityReadJob); err != nil {
		return err
	}
	return j.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		s, err := st.JobSummaryByID(ws, nsOrDefault(args.Namespace), args.JobID)
		if err != nil {
			return 0, err
		}
		reply.JobSummary = s
		if s != nil {
			return s.ModifyIndex, nil
		}
		return maxIndex(st, state.TableJobSummary), nil
	})
}

// Allocations lists a job's allocations.
func (j *Job) Allocations(args *structs.JobSpecificRequest, reply *structs.JobAllocationsResponse) error {
	if done, err := j.srv.forward("Job.Allocations", args, args, reply); done {
		return err
	}
	if _, err := j.srv.allowNamespaceOp(args, args.Namespace, acl.NamespaceCapabilityReadJob); err != nil {
		return err
	}
	return j.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		allocs, err := st.AllocsByJob(ws, nsOrDefault(args.Namespace), args.JobID, args.All)
		if err != nil {
			return 0, err
		}
		if reply.Allocations, err = stubs(&args.QueryOptions, &reply.QueryMeta, allocs); err != nil {
			return 0, err
		}
		return maxIndex(st, state.TableAllocs), nil
	})
}

// Evaluations lists a job's evaluations.
func (j *Job) Evaluations(args *structs.JobSpecificRequest, reply *structs.JobEvaluationsResponse) error {
	if done, err := j.srv.forward("Job.Evaluations", args, args, reply); done {
		return err
	}
	if _, err := j.srv.allowNamespaceOp(args, args.Namespace, acl.NamespaceCapabilityReadJob); err != nil {
		return err
	}
	return j.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		evals, err := st.EvalsByJob(ws, nsOrDefault(args.Namespace), args.JobID)
		if err != nil {
			return 0, err
		}
		if reply.Evaluations, err = evalPager.page(&args.QueryOptions, &reply.QueryMeta, evals); err != nil {
			return 0, err
		}
		return maxIndex(st, state.TableEvals), nil
	})
}

// GetJobVersions lists a job's stored versions, newest first.
func (j *Job) GetJobVersions(args *structs.JobVersionsRequest, reply *structs.JobVersionsResponse) error {
	if done, err := j.srv.forward("Job.GetJobVersions", args, args, reply); done {
		return err
	}
	if _, err := j.srv.allowNamespaceOp(args, args.Namespace, acl.NamespaceCapabilityReadJob); err != nil {
		return err
	}
	return j.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		versions, err := st.JobVersionsByID(ws, nsOrDefault(args.Namespace), args.JobID)
		if err != nil {
			return 0, err
		}
		if reply.Versions, err = jobVersionPager.page(&args.QueryOptions, &reply.QueryMeta, versions); err != nil {
			return 0, err
		}
		if len(versions) > 0 {
			return versions[0].ModifyIndex, nil
		}
		return maxIndex(st, state.TableJobVersion), nil
	})
}

// Deployments lists a job's deployments.
func (j *Job) Deployments(args *structs.JobSpecificRequest, reply *structs.JobDeploymentsResponse) error {
	if done, err := j.srv.forward("Job.Deployments", args, args, reply); done {
		return err
	}
	if _, err := j.srv.allowNamespaceOp(args, args.Namespace, acl.NamespaceCapabilityReadJob); err != nil {
		return err
	}
	return j.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		ds, err := st.DeploymentsByJobID(ws, nsOrDefault(args.Namespace), args.JobID, true)
		if err != nil {
			return 0, err
		}
		if reply.Deployments, err = deploymentPager.page(&args.QueryOptions, &reply.QueryMeta, ds); err != nil {
			return 0, err
		}
		return maxIndex(st, state.TableDeployments), nil
	})
}

// LatestDeployment returns a job's newest deployment, or nil.
func (j *Job) LatestDeployment(args *structs.JobSpecificRequest, reply *structs.SingleDeploymentResponse) error {
	if done, err := j.srv.forward("Job.LatestDeployment", args, args, reply); done {
		return err
	}
	if _, err := j.srv.allowNamespaceOp(args, args.Namespace, acl.NamespaceCapabilityReadJob); err != nil {
		return err
	}
	return j.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		d, err := st.LatestDeploymentByJobID(ws, nsOrDefault(args.Namespace), args.JobID)
		if err != nil {
			return 0, err
		}
		reply.Deployment = d
		return maxIndex(st, state.TableDeployments), nil
	})
}
