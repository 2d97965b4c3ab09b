package nomad

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/nomad/deploymentwatcher"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// maxHealthAllocIDs bounds the allocs one alloc-health request may name: a
// deployment has at most as many allocs as its job's groups ask for, and a
// request far beyond that is not a mistake worth a large raft entry.
const maxHealthAllocIDs = 10000

// Allocations lists a deployment's allocations (read-job in its
// namespace).
func (d *Deployment) Allocations(args *structs.DeploymentSpecificRequest, reply *structs.DeploymentAllocsResponse) error {
	if done, err := d.srv.forward("Deployment.Allocations", args, args, reply); done {
		return err
	}
	aclObj, err := d.srv.allowNamespaceOp(args, acl.AllNamespaces, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	return d.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		dep, err := deploymentIn(ws, st, aclObj, args.DeploymentID, acl.NamespaceCapabilityReadJob)
		if err != nil {
			return 0, err
		}
		if dep == nil {
			return 0, deploymentNotFound(args.DeploymentID)
		}
		allocs, err := st.AllocsByDeployment(ws, dep.ID)
		if err != nil {
			return 0, err
		}
		if reply.Allocations, err = stubs(&args.QueryOptions, &reply.QueryMeta, allocs); err != nil {
			return 0, err
		}
		return maxIndex(st, state.TableAllocs, state.TableDeployments), nil
	})
}

// Promote promotes a deployment's canaries: every group (All) or the named
// Groups. Every canary of a promoted group must be healthy.
func (d *Deployment) Promote(args *structs.DeploymentPromoteRequest, reply *structs.DeploymentUpdateResponse) error {
	if done, err := d.srv.forward("Deployment.Promote", args, args, reply); done {
		return err
	}
	dep, job, err := d.writable(args, args.DeploymentID)
	if err != nil {
		return err
	}
	if args.All && len(args.Groups) > 0 {
		return errBadRequest("All and Groups are both set; promote either every group (All) or the named Groups")
	}
	now := d.srv.Now()
	req := *args
	req.DeploymentID, req.UpdatedAt = dep.ID, now.UnixNano()
	req.Eval = deploymentwatcher.Eval(job, dep, now, structs.GenerateUUID())
	if err := d.srv.State().CheckDeploymentPromotion(&req); err != nil {
		return deploymentRequestError(err)
	}
	return d.applyChecked(structs.DeploymentPromoteRequestType, &req, req.Eval.ID, reply)
}

// Pause pauses a running deployment (the watcher and the scheduler leave it
// alone) or resumes a paused one, with an eval that moves it on.
func (d *Deployment) Pause(args *structs.DeploymentPauseRequest, reply *structs.DeploymentUpdateResponse) error {
	if done, err := d.srv.forward("Deployment.Pause", args, args, reply); done {
		return err
	}
	dep, job, err := d.writable(args, args.DeploymentID)
	if err != nil {
		return err
	}
	now := d.srv.Now()
	req := &structs.DeploymentStatusUpdateRequest{UpdatedAt: now.UnixNano(), WriteRequest: args.WriteRequest}
	switch {
	case args.Pause && dep.Status == structs.DeploymentStatusRunning:
		req.DeploymentUpdate = &structs.DeploymentStatusUpdate{DeploymentID: dep.ID,
			Status: structs.DeploymentStatusPaused, StatusDescription: structs.DeploymentStatusDescriptionPaused}
	case !args.Pause && dep.Status == structs.DeploymentStatusPaused:
		req.DeploymentUpdate = &structs.DeploymentStatusUpdate{DeploymentID: dep.ID,
			Status: structs.DeploymentStatusRunning, StatusDescription: runningDescription(dep)}
		req.Eval = deploymentwatcher.Eval(job, dep, now, structs.GenerateUUID())
	case args.Pause:
		return errBadRequest("cannot pause deployment %s: it is %s; only a running deployment can be paused", structs.ShortID(dep.ID), dep.Status)
	default:
		return errBadRequest("cannot resume deployment %s: it is %s; only a paused deployment can be resumed", structs.ShortID(dep.ID), dep.Status)
	}
	return d.applyStatus(req, reply)
}

// runningDescription is what a resumed deployment says about itself.
func runningDescription(d *structs.Deployment) string {
	var waiting, auto bool
	for _, st := range d.TaskGroups {
		if st.DesiredCanaries > 0 && !st.Promoted {
			waiting = true
			auto = auto || st.AutoPromote
		}
	}
	switch {
	case waiting && auto:
		return structs.DeploymentStatusDescriptionRunningAutoPromotion
	case waiting:
		return structs.DeploymentStatusDescriptionRunningNeedsPromotion
	}
	return structs.DeploymentStatusDescriptionRunning
}

// Fail fails an active deployment by hand; a group with auto_revert rolls
// the job back to its newest stable version, as the watcher would.
func (d *Deployment) Fail(args *structs.DeploymentFailRequest, reply *structs.DeploymentUpdateResponse) error {
	if done, err := d.srv.forward("Deployment.Fail", args, args, reply); done {
		return err
	}
	dep, _, err := d.writable(args, args.DeploymentID)
	if err != nil {
		return err
	}
	req, reverted, err := deploymentwatcher.FailureRequest(d.srv.State(), dep, structs.DeploymentStatusDescriptionFailedByUser, d.srv.Now(), structs.GenerateUUID)
	if err != nil {
		return err
	}
	req.WriteRequest = args.WriteRequest
	reply.RevertedJobVersion = reverted
	return d.applyStatus(req, reply)
}

// Unblock moves a blocked deployment on to successful, as Nomad does for a
// region that waits for others.
func (d *Deployment) Unblock(args *structs.DeploymentUnblockRequest, reply *structs.DeploymentUpdateResponse) error {
	if done, err := d.srv.forward("Deployment.Unblock", args, args, reply); done {
		return err
	}
	dep, job, err := d.writable(args, args.DeploymentID)
	if err != nil {
		return err
	}
	if dep.Status != structs.DeploymentStatusBlocked {
		return errBadRequest("cannot unblock deployment %s: it is %s; only a blocked deployment can be unblocked", structs.ShortID(dep.ID), dep.Status)
	}
	now := d.srv.Now()
	req := &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: dep.ID,
			Status: structs.DeploymentStatusSuccessful, StatusDescription: structs.DeploymentStatusDescriptionUnblocked},
		Eval: deploymentwatcher.Eval(job, dep, now, structs.GenerateUUID()), UpdatedAt: now.UnixNano(), WriteRequest: args.WriteRequest,
	}
	return d.applyStatus(req, reply)
}

// SetAllocHealth records a person's health verdict on a deployment's
// allocs (for health_check = "manual", or to override the client). An
// unhealthy verdict fails the deployment in the same write, with
// auto-revert as the watcher would do it.
func (d *Deployment) SetAllocHealth(args *structs.DeploymentAllocHealthRequest, reply *structs.DeploymentUpdateResponse) error {
	if done, err := d.srv.forward("Deployment.SetAllocHealth", args, args, reply); done {
		return err
	}
	dep, job, err := d.writable(args, args.DeploymentID)
	if err != nil {
		return err
	}
	if n := len(args.HealthyAllocationIDs) + len(args.UnhealthyAllocationIDs); n > maxHealthAllocIDs {
		return errBadRequest("HealthyAllocationIDs and UnhealthyAllocationIDs name %d allocations; at most %d may be named at once", n, maxHealthAllocIDs)
	}
	if dep.Status != structs.DeploymentStatusRunning {
		return errBadRequest("cannot set allocation health in deployment %s: it is %s; only a running deployment takes health", structs.ShortID(dep.ID), dep.Status)
	}
	now := d.srv.Now()
	req := &structs.ApplyDeploymentAllocHealthRequest{DeploymentAllocHealthRequest: *args, Timestamp: now.UnixNano()}
	req.DeploymentID = dep.ID
	if len(args.UnhealthyAllocationIDs) > 0 {
		fail, reverted, err := deploymentwatcher.FailureRequest(d.srv.State(), dep, structs.DeploymentStatusDescriptionFailedAllocations, now, structs.GenerateUUID)
		if err != nil {
			return err
		}
		req.DeploymentUpdate, req.Job, req.Eval = fail.DeploymentUpdate, fail.Job, fail.Eval
		reply.RevertedJobVersion = reverted
	} else {
		req.Eval = deploymentwatcher.Eval(job, dep, now, structs.GenerateUUID())
	}
	if err := d.srv.State().CheckDeploymentAllocHealth(req); err != nil {
		return deploymentRequestError(err)
	}
	return d.applyChecked(structs.DeploymentAllocHealthRequestType, req, req.Eval.ID, reply)
}

// writable finds an active deployment the request's token may change
// (submit-job in its namespace) and its job.
func (d *Deployment) writable(info structs.RPCInfo, id string) (*structs.Deployment, *structs.Job, error) {
	aclObj, err := d.srv.allowNamespaceOp(info, acl.AllNamespaces, acl.NamespaceCapabilitySubmitJob)
	if err != nil {
		return nil, nil, err
	}
	if id == "" {
		return nil, nil, errBadRequest("DeploymentID is empty; name the deployment to change")
	}
	st := d.srv.State()
	dep, err := deploymentIn(nil, st, aclObj, id, acl.NamespaceCapabilitySubmitJob)
	if err != nil {
		return nil, nil, err
	}
	if dep == nil {
		return nil, nil, deploymentNotFound(id)
	}
	if !dep.Active() {
		return nil, nil, errBadRequest("deployment %s is %s and can no longer change", structs.ShortID(dep.ID), dep.Status)
	}
	job, err := st.JobByID(nil, dep.Namespace, dep.JobID)
	if err != nil {
		return nil, nil, err
	}
	return dep, job, nil
}

// applyChecked commits a promotion or an alloc-health verdict: writes
// the state store checked first, that always carry an eval (evalID). The
// state may change before the entry applies, so a refusal from the
// write itself (ErrDeploymentRequest) is answered as a bad request too.
func (d *Deployment) applyChecked(t structs.MessageType, req any, evalID string, reply *structs.DeploymentUpdateResponse) error {
	idx, _, err := d.srv.raftApply(t, req)
	if err != nil {
		return deploymentRequestError(err)
	}
	reply.EvalID, reply.EvalCreateIndex, reply.DeploymentModifyIndex, reply.Index = evalID, idx, idx, idx
	return nil
}

func (d *Deployment) applyStatus(req *structs.DeploymentStatusUpdateRequest, reply *structs.DeploymentUpdateResponse) error {
	idx, _, err := d.srv.raftApply(structs.DeploymentStatusUpdateRequestType, req)
	if err != nil {
		return err
	}
	if req.Eval != nil {
		reply.EvalID, reply.EvalCreateIndex = req.Eval.ID, idx
	}
	reply.DeploymentModifyIndex, reply.Index = idx, idx
	return nil
}

func deploymentNotFound(id string) error {
	return fmt.Errorf("deployment %q: %w", id, structs.ErrNotFound)
}

// deploymentRequestError turns the state store's refusal of a promote or
// health request into a bad request the HTTP layer answers with 400.
func deploymentRequestError(err error) error {
	if errors.Is(err, state.ErrDeploymentRequest) {
		return errBadRequest("%s", strings.TrimPrefix(err.Error(), state.ErrDeploymentRequest.Error()+": "))
	}
	return err
}
