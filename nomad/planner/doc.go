// Package planner is the leader's plan queue and plan applier: where the
// plans of every scheduler worker meet, are checked once more against the
// newest state, and are committed through raft one decision at a time.
//
// # What it owns
//
//   - Queue (queue.go): the plans workers submitted, highest priority
//     first, then in arrival order, each with the Future its submitter
//     waits on. Only the leader's queue is enabled.
//   - The evaluation of a plan (evaluate.go): every node of the plan is
//     checked against a View (a state snapshot, with the plans still being
//     committed laid over it): stops, preemptions and lost or unknown
//     marks are always allowed when they are valid server updates; new
//     work needs a node that is ready, eligible and not draining; and what
//     will hold resources on the node must fit (structs.AllocsFit).
//   - Applier (apply.go): the single loop that takes plans from the
//     queue, checks them, commits what fits as one ApplyPlanResultsRequest
//     raft entry per batch and answers each plan. It overlaps the check of
//     the next batch with the commit of the previous one (pipelining), and
//     with GroupCommit merges plans that touch disjoint allocations into
//     one entry; Applier's comment says how.
//   - Split and MergeResults (split.go), the worker's side: a plan larger
//     than PartBudget is sent in parts, each committed like a plan of its
//     own, and their results are folded into one.
//
// # What it promises
//
//   - No overcommit: a committed entry never leaves a node with more
//     allocated than it has, in any resource or port. An allocation keeps
//     its resources until its client reports it terminal, even once a plan
//     stopped it, unless a plan marks it lost. The optimistic overlay errs
//     towards holding resources, so a plan checked beside an in-flight one
//     is never admitted where the committed state would refuse it.
//     TestPlanApply_ConcurrentConflictingPlansNeverOvercommit holds this
//     under pipelining and group commit.
//   - In order: one applier decides everything, each plan against the
//     state with every earlier plan applied; a plan checked against an
//     in-flight commit that then failed is checked again on fresh state.
//   - Partial commits: a node that does not fit drops out of the result
//     and is listed in RejectedNodes, with a RefreshIndex that includes
//     what the check saw and every commit of its batch, so the worker's
//     next snapshot shows why; an all_at_once plan commits all or nothing.
//   - Every plan taken from the queue is answered, also when the applier
//     stops; disabling the queue answers the waiting ones with
//     ErrQueueDisabled, so no worker waits forever.
//   - An entry is the same on every run: plans in order, nodes sorted.
//     Plans are merged only while the entry's estimated size stays within
//     mergeBudget, and an entry holds at most one plan's deployment
//     changes.
//
// # Who owns what
//
// The Queue's plans are under its mutex, shared by the submitters (the
// server's Plan.Submit calls) and the applier. Run is one goroutine,
// started by the leader after it enables the queue and stopped with the
// leader context; the server waits for it. It alone owns the batch in
// flight, the plans taken but not yet checked, and the index of its last
// commit, which is the least index of the next snapshot it checks
// against. A plan's node checks run on up to Workers goroutines that the
// check starts and waits for; they read the view without a lock because
// it is written only between checks. Nothing survives a leader change:
// plans are answered, and state is in raft.
//
// # What it needs
//
// Config: State, a StateSource whose SnapshotMinIndex gives a Snapshot
// (a View and its LatestIndex) at least as new as an index; Raft, whose
// ApplyPlanResults submits the entry without waiting and returns a
// RaftFuture; a clock from helper/clock to stamp UpdatedAt, as the FSM
// may not read one; a logger; metrics. It does not import the server or
// nomad/state: the state store's snapshots satisfy Snapshot as they are,
// and nomad/leader_planner.go adapts the store and raft. It needs no eval
// broker: Plan.Submit checks that the submitter still holds its
// evaluation, and pauses its nack timer, before enqueueing the plan.
package planner
