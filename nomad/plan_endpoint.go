package nomad

import (
	"fmt"

	"github.com/drover-sched/drover/nomad/planner"
	"github.com/drover-sched/drover/structs"
)

// Plan receives plans from workers and hands them to the leader's single
// plan applier, answering with what was committed.
type Plan struct {
	srv planServer
}

// planServer is what Plan uses of the server: the broker's nack timers of
// the plan's eval and the leader's plan queue.
type planServer interface {
	rpcForwarder
	serverPeerChecker
	planNackTimers() planNackTimers
	planEnqueuer() planEnqueuer
}

// planNackTimers pauses an outstanding eval's nack timer while its plan
// waits (broker.EvalBroker).
type planNackTimers interface {
	PauseNackTimeout(evalID, token string) error
	ResumeNackTimeout(evalID, token string) error
}

// planEnqueuer hands a plan to the applier (planner.Queue).
type planEnqueuer interface {
	Enqueue(plan *structs.Plan) (planner.Future, error)
}

func (s *Server) planNackTimers() planNackTimers { return s.evalBroker }
func (s *Server) planEnqueuer() planEnqueuer     { return s.planQueue }

var _ planServer = (*Server)(nil)

// Submit enqueues a plan and waits for its result. The submitting worker
// must still own the plan's eval: a worker whose eval was redelivered to
// another worker (nack timeout) must not commit a stale plan. Only servers
// may call it (see requireServer).
func (p *Plan) Submit(args *structs.PlanRequest, reply *structs.PlanResponse) error {
	if done, err := serverOnly(p.srv, "Plan.Submit", args, reply); done {
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
	if err := p.srv.planNackTimers().PauseNackTimeout(plan.EvalID, plan.EvalToken); err != nil {
		return fmt.Errorf("%w: plan for eval %s: %v", structs.ErrTokenMismatch, plan.EvalID, err)
	}
	defer p.srv.planNackTimers().ResumeNackTimeout(plan.EvalID, plan.EvalToken)
	future, err := p.srv.planEnqueuer().Enqueue(plan)
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
