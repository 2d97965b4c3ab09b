package nomad

import (
	"time"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/nomad/fsm"
	"github.com/drover-sched/drover/structs"
)

// Dispatch creates a child of a parameterized job with the request's
// payload and meta (`job dispatch`), and the evaluation that schedules it,
// in one raft entry. The parent must exist, be parameterized and not be
// stopped; the payload and meta must satisfy its parameterized block. A
// rejected request writes nothing.
//
// The child's ID (<parent>/dispatch-<unix seconds>-<8 hex>), its submit
// time and the eval's ID are chosen here, before raft, never in the FSM.
// With an idempotency token, a dispatch while a child with that token is
// neither stopped nor dead answers with that child and creates nothing;
// the FSM checks the token again, so two racing dispatches with one token
// still store one child.
func (j *Job) Dispatch(args *structs.JobDispatchRequest, reply *structs.JobDispatchResponse) error {
	if done, err := j.srv.forward("Job.Dispatch", args, args, reply); done {
		return err
	}
	if _, err := j.srv.allowNamespaceOp(args, args.Namespace, acl.NamespaceCapabilityDispatchJob); err != nil {
		return err
	}
	if args.JobID == "" {
		return errBadRequest("job ID is missing: name the parameterized job to dispatch")
	}
	ns := nsOrDefault(args.Namespace)
	st := j.srv.State()
	parent, err := st.JobByID(nil, ns, args.JobID)
	if err != nil {
		return err
	}
	if err := fsm.CheckDispatchParent(parent, args.JobID); err != nil {
		return err
	}
	if err := structs.ValidateDispatch(parent, args); err != nil {
		return errBadRequest("dispatching job %q: %v", parent.ID, err)
	}
	// A fast answer without a raft write; the FSM makes the binding check.
	if tok := args.IdempotencyToken; tok != "" {
		existing, err := fsm.LiveDispatchedChild(st, ns, parent.ID, tok)
		if err != nil {
			return err
		}
		if existing != nil {
			answerExistingChild(reply, existing)
			return nil
		}
	}

	now := j.srv.Now()
	child := deriveDispatchedChild(parent, args, now, structs.GenerateUUID()[:8])
	// The child carries the parent, the payload and the dispatch meta: it
	// is bounded like any job the user submits.
	if err := j.srv.jobLimits().check(child); err != nil {
		return err
	}
	eval := &structs.Evaluation{
		ID: structs.GenerateUUID(), Namespace: child.Namespace, Priority: child.Priority, Type: child.Type,
		TriggeredBy: structs.EvalTriggerJobRegister, JobID: child.ID, Status: structs.EvalStatusPending,
		CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
	}
	idx, resp, err := j.srv.raftApply(structs.JobDispatchRequestType, &structs.JobDispatchApplyRequest{Job: child, Eval: eval})
	if err != nil {
		return err
	}
	if dup, ok := resp.(*fsm.DispatchDuplicate); ok {
		answerExistingChild(reply, dup.Child)
		return nil
	}
	reply.DispatchedJobID = child.ID
	reply.EvalID = eval.ID
	reply.EvalCreateIndex = idx
	reply.JobCreateIndex = idx
	reply.Index = idx
	return nil
}

// answerExistingChild answers a repeated dispatch with the child that
// already holds its idempotency token, and no evaluation, as Nomad does.
func answerExistingChild(reply *structs.JobDispatchResponse, child *structs.Job) {
	reply.DispatchedJobID = child.ID
	reply.EvalID = ""
	reply.EvalCreateIndex = 0
	reply.JobCreateIndex = child.CreateIndex
	reply.Index = child.ModifyIndex
}

// deriveDispatchedChild makes the child a dispatch creates: a child of the
// parent's current version, as a periodic launch makes one, marked
// Dispatched (it keeps the parent's parameterized block, as in Nomad, but
// IsParameterized is false for it), with the request's meta merged
// over the parent's, its payload, its idempotency token and, if given, its
// priority. suffix is the random part of the ID.
func deriveDispatchedChild(parent *structs.Job, args *structs.JobDispatchRequest, now time.Time, suffix string) *structs.Job {
	c := deriveChildJob(parent, structs.DispatchedID(parent.ID, args.IdPrefixTemplate, now, suffix), now)
	c.Dispatched = true
	c.DispatchIdempotencyToken = args.IdempotencyToken
	if len(args.Meta) > 0 && c.Meta == nil {
		c.Meta = make(map[string]string, len(args.Meta))
	}
	for k, v := range args.Meta {
		c.Meta[k] = v
	}
	c.Payload = nil
	if len(args.Payload) > 0 {
		c.Payload = append([]byte(nil), args.Payload...)
	}
	if args.Priority != 0 {
		c.Priority = args.Priority
	}
	return c
}
