package nomad

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
)

// Plan receives plans from workers and hands them to the leader's single
// plan applier, answering with what was committed.
type Plan struct {
	srv *Server
}

// Submit enqueues a plan and waits for its result. The submitting worker
// must still own the plan's eval: a worker whose eval was redelivered to
// another worker (nack timeout) must not commit a stale plan. Only servers
// may call it (see requireServer).
func (p *Plan) Submit(args *structs.PlanRequest, reply *structs.PlanResponse) error {
	if err := p.srv.requireServer("Plan.Submit", args); err != nil {
		return err
	}
	if done, err := p.srv.forward("Plan.Submit", args, args, reply); done {
		return err
	}
	plan := args.Plan
	if plan == nil {
		return errBadRequest("plan is missing")
	}
	plan.Denormalize()
	// Pausing the eval's nack timer is also the ownership check: it fails
	// unless this token still holds the eval, so a worker whose eval timed
	// out and went to another worker cannot commit a stale plan. Applying a
	// large plan can take a while; the eval must not time out meanwhile.
	if err := p.srv.evalBroker.PauseNackTimeout(plan.EvalID, plan.EvalToken); err != nil {
		return fmt.Errorf("%w: plan for eval %s: %v", structs.ErrTokenMismatch, plan.EvalID, err)
	}
	defer p.srv.evalBroker.ResumeNackTimeout(plan.EvalID, plan.EvalToken)
	future, err := p.srv.planQueue.Enqueue(plan)
	if err != nil {
		return err
	}
	result, err := future.Wait()
	if err != nil {
		return err
	}
	reply.Result = result.Normalized()
	reply.Index = result.AllocIndex
	return nil
}
