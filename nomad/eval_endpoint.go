package nomad

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// Eval serves workers (dequeue, ack, nack, update) and readers of evals.
// Worker calls always run on the leader, where the broker lives, and only
// servers may make them (see requireServer); reading evals needs read-job
// in their namespace.
type Eval struct {
	srv evalServer
}

// evalServer is what Eval uses of the server: besides the shared pieces,
// the broker's leases (workers dequeue, ack and nack through it) and the
// blocked evals.
type evalServer interface {
	rpcForwarder
	serverPeerChecker
	namespaceChecker
	blockingQuerier
	queryMetaSetter
	stateReader
	Now() time.Time
	raftApplier
	serverLifetime
	Logger() hclog.Logger
	evalLeases() evalLeases
	evalReblocker() evalReblocker
}

// evalLeases is the broker's side of a worker's eval (broker.EvalBroker).
type evalLeases interface {
	Dequeue(ctx context.Context, schedulers []string) (*structs.Evaluation, string, error)
	Ack(evalID, token string) error
	Nack(evalID, token string) error
	Return(evalID, token string) error
	OutstandingToken(token string) (string, bool)
	OutstandingReset(evalID, token string) error
}

// evalReblocker takes back an eval a worker could not place
// (broker.BlockedEvals).
type evalReblocker interface {
	Reblock(eval *structs.Evaluation, token string)
}

func (s *Server) evalLeases() evalLeases       { return s.evalBroker }
func (s *Server) evalReblocker() evalReblocker { return s.blockedEvals }

var _ evalServer = (*Server)(nil)

const maxDequeueTimeout = 10 * time.Second

// Dequeue hands the caller the next ready eval for its schedulers, waiting
// up to Timeout. WaitIndex is the state index the worker must reach first.
func (e *Eval) Dequeue(args *structs.EvalDequeueRequest, reply *structs.EvalDequeueResponse) error {
	if done, err := serverOnly(e.srv, "Eval.Dequeue", args, reply); done {
		return err
	}
	if len(args.Schedulers) == 0 {
		return errBadRequest("dequeue needs at least one scheduler type")
	}
	timeout := args.Timeout
	if timeout <= 0 || timeout > maxDequeueTimeout {
		timeout = maxDequeueTimeout
	}
	ctx, cancel := context.WithTimeout(e.srv.lifetime(), timeout)
	defer cancel()
	// The wait ends when the caller goes away too (a worker's server
	// gave up on a forward, a connection closed): an eval leased to a
	// caller that cannot get the answer would sit outstanding until its
	// nack timeout, holding the job's later evals back.
	caller := args.CallContext()
	defer context.AfterFunc(caller, cancel)()
	eval, token, err := e.srv.evalLeases().Dequeue(ctx, args.Schedulers)
	if err != nil {
		if ctx.Err() != nil {
			return nil // timed out, or the caller left: no work
		}
		return err
	}
	if eval == nil {
		return nil
	}
	if caller.Err() != nil {
		// Leased as the caller left: back to the queue at once.
		_ = e.srv.evalLeases().Return(eval.ID, token)
		return nil
	}
	reply.Eval, reply.Token = eval, token
	// The eval's own index, or the job's if newer: a worker must see the
	// job version the eval was made for.
	reply.WaitIndex = eval.ModifyIndex
	if latest, err := e.srv.State().LatestIndex(); err == nil && latest > reply.WaitIndex {
		reply.WaitIndex = latest
	}
	e.srv.setQueryMeta(&reply.QueryMeta)
	return nil
}

// Ack marks an eval done.
func (e *Eval) Ack(args *structs.EvalAckRequest, reply *structs.GenericResponse) error {
	if done, err := serverOnly(e.srv, "Eval.Ack", args, reply); done {
		return err
	}
	return e.srv.evalLeases().Ack(args.EvalID, args.Token)
}

// Nack returns an eval to the broker for redelivery.
func (e *Eval) Nack(args *structs.EvalAckRequest, reply *structs.GenericResponse) error {
	if done, err := serverOnly(e.srv, "Eval.Nack", args, reply); done {
		return err
	}
	return e.srv.evalLeases().Nack(args.EvalID, args.Token)
}

// workerEval is the one eval an Update, Create or Reblock (verb) writes,
// once checkToken accepted the worker's token.
func (e *Eval) workerEval(verb string, args *structs.EvalUpdateRequest) (*structs.Evaluation, error) {
	if len(args.Evals) != 1 {
		return nil, errBadRequest("%s takes exactly one evaluation, got %d", verb, len(args.Evals))
	}
	if err := e.checkToken(args.EvalToken); err != nil {
		return nil, err
	}
	return args.Evals[0], nil
}

// checkToken verifies the caller is a worker that still holds an eval (the
// one its token was issued for), and restarts that eval's nack timer: the
// worker is making progress. Writes a worker makes under its token may
// concern other evals of the same job (canceling an outdated blocked eval,
// creating follow-ups), so the token, not the written eval, is checked.
func (e *Eval) checkToken(token string) error {
	evalID, ok := e.srv.evalLeases().OutstandingToken(token)
	if !ok {
		return fmt.Errorf("%w: no outstanding evaluation holds this token", structs.ErrTokenMismatch)
	}
	if err := e.srv.evalLeases().OutstandingReset(evalID, token); err != nil {
		e.srv.Logger().Debug("resetting nack timer", "eval", evalID, "error", err)
	}
	return nil
}

// Update writes the worker's final version of its eval.
func (e *Eval) Update(args *structs.EvalUpdateRequest, reply *structs.GenericResponse) error {
	if done, err := serverOnly(e.srv, "Eval.Update", args, reply); done {
		return err
	}
	if _, err := e.workerEval("update", args); err != nil {
		return err
	}
	return e.applyEvals(args, reply)
}

// Create writes follow-up evals a scheduler made (delayed reschedules,
// disconnect timeouts, blocked evals). The creating eval's token is checked.
func (e *Eval) Create(args *structs.EvalUpdateRequest, reply *structs.GenericResponse) error {
	if done, err := serverOnly(e.srv, "Eval.Create", args, reply); done {
		return err
	}
	eval, err := e.workerEval("create", args)
	if err != nil {
		return err
	}
	if existing, err := e.srv.State().EvalByID(nil, eval.ID); err != nil {
		return err
	} else if existing != nil {
		return fmt.Errorf("evaluation %s already exists", eval.ID)
	}
	return e.applyEvals(args, reply)
}

// Reblock puts a blocked eval that still cannot place back into
// BlockedEvals, keeping its ID.
func (e *Eval) Reblock(args *structs.EvalUpdateRequest, reply *structs.GenericResponse) error {
	if done, err := serverOnly(e.srv, "Eval.Reblock", args, reply); done {
		return err
	}
	eval, err := e.workerEval("reblock", args)
	if err != nil {
		return err
	}
	if eval.Status != structs.EvalStatusBlocked {
		return errBadRequest("reblock needs a blocked evaluation, got status %q", eval.Status)
	}
	// Written with a status the FSM hook does not re-block: the broker
	// still owns the eval until it is acked, so we block it here.
	idx, _, err := e.srv.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: args.Evals})
	if err != nil {
		return err
	}
	e.srv.evalReblocker().Reblock(eval, args.EvalToken)
	reply.Index = idx
	return nil
}

func (e *Eval) applyEvals(args *structs.EvalUpdateRequest, reply *structs.GenericResponse) error {
	now := e.srv.Now().UnixNano()
	for _, ev := range args.Evals {
		if ev.CreateTime == 0 {
			ev.CreateTime = now
		}
		ev.ModifyTime = now
	}
	return applyIndexed(e.srv, structs.EvalUpdateRequestType, args, &reply.Index)
}

// GetEval returns one eval by ID (or unique prefix).
func (e *Eval) GetEval(args *structs.EvalSpecificRequest, reply *structs.SingleEvalResponse) error {
	if done, err := e.srv.forward("Eval.GetEval", args, args, reply); done {
		return err
	}
	a, err := e.srv.allowNamespaceOp(args, acl.AllNamespaces, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	return e.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		eval, err := st.EvalByID(ws, args.EvalID)
		if err != nil {
			return 0, err
		}
		if eval != nil && !allowedIn(a, eval.Namespace, acl.NamespaceCapabilityReadJob) {
			return 0, objectDenied("evaluation", eval.ID, eval.Namespace, acl.NamespaceCapabilityReadJob)
		}
		reply.Eval = eval
		if eval != nil {
			return eval.ModifyIndex, nil
		}
		return maxIndex(st, state.TableEvals), nil
	})
}

// List returns evals, newest first, filtered by ID prefix, job and status,
// and to the namespaces where the token has read-job.
func (e *Eval) List(args *structs.EvalListRequest, reply *structs.EvalListResponse) error {
	if done, err := e.srv.forward("Eval.List", args, args, reply); done {
		return err
	}
	scope, err := listScopeFor(e.srv, args, &args.QueryOptions, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	return e.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		it, err := st.Evals(ws)
		if err != nil {
			return 0, err
		}
		out := collect(it, scope, func(ev *structs.Evaluation) (string, string) { return ev.Namespace, ev.ID })
		out = slices.DeleteFunc(out, func(ev *structs.Evaluation) bool {
			return (args.FilterJobID != "" && ev.JobID != args.FilterJobID) ||
				(args.FilterEvalStatus != "" && ev.Status != args.FilterEvalStatus)
		})
		if reply.Evaluations, err = evalPager.page(&args.QueryOptions, &reply.QueryMeta, out); err != nil {
			return 0, err
		}
		return maxIndex(st, state.TableEvals), nil
	})
}

// Allocations lists the allocations an eval created.
func (e *Eval) Allocations(args *structs.EvalSpecificRequest, reply *structs.EvalAllocationsResponse) error {
	if done, err := e.srv.forward("Eval.Allocations", args, args, reply); done {
		return err
	}
	a, err := e.srv.allowNamespaceOp(args, acl.AllNamespaces, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	return e.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		allocs, err := st.AllocsByEval(ws, args.EvalID)
		if err != nil {
			return 0, err
		}
		if reply.Allocations, err = stubs(&args.QueryOptions, &reply.QueryMeta, readable(a, allocs)); err != nil {
			return 0, err
		}
		return maxIndex(st, state.TableAllocs), nil
	})
}

// evalPager pages evaluations newest first.
var evalPager = pager[*structs.Evaluation]{
	key:  func(e *structs.Evaluation) string { return newestKey(e.CreateIndex, e.ID) },
	size: sized[*structs.Evaluation],
	name: func(e *structs.Evaluation) string { return "evaluation " + e.ID },
}

// stubs is the page q asks for of allocs' list views, newest first.
func stubs(q *structs.QueryOptions, m *structs.QueryMeta, allocs []*structs.Allocation) ([]*structs.AllocListStub, error) {
	out := make([]*structs.AllocListStub, 0, len(allocs))
	for _, a := range allocs {
		out = append(out, a.Stub())
	}
	return stubPager.page(q, m, out)
}

var stubPager = pager[*structs.AllocListStub]{
	key:  func(a *structs.AllocListStub) string { return newestKey(a.CreateIndex, a.ID) },
	size: sized[*structs.AllocListStub],
	name: func(a *structs.AllocListStub) string { return "allocation " + a.ID },
}
