// Package scheduler turns an evaluation into a plan.
//
// A Scheduler is a function of a state snapshot and an evaluation: Process
// reads the job, its allocations, the nodes they are on and the job's
// evaluations from Config.State, asks the reconciler (package reconciler)
// what should happen to the allocations, asks the feasibility stack
// (package feasible) where new allocations should go, and submits the
// resulting plan through Config.Planner. It reads no clock (Config.Now is
// the only time it knows), starts no goroutine, does no I/O of its own and
// draws every random choice and every new ID from one source seeded by
// Config.Seed or, when that is zero, by the evaluation ID and the
// snapshot's index, so that the same evaluation on the same snapshot always
// yields the same plan and a post-mortem can replay it, while the same
// evaluation scheduled again on a later state draws afresh. A new ID is
// never one the snapshot already holds.
//
// Two schedulers exist. The generic scheduler runs service and batch jobs:
// Count allocations per task group, placed on the best of a sample of
// nodes, rescheduled after failures by the group's reschedule policy. The
// system scheduler runs system and sysbatch jobs: one allocation per task
// group on every eligible node whose attributes match the job.
//
// When the plan applier refuses part of a plan (a node filled up meanwhile),
// the scheduler starts again from the refreshed snapshot the planner hands
// back, a bounded number of times; then the evaluation fails and a
// follow-up evaluation retries the job later. Placements that find no node
// are reported on the evaluation (FailedTGAllocs, QueuedAllocations) and
// wait in one blocked evaluation per job until the cluster changes.
//
// Nothing in this package imports the server (nomad/): the server's state
// snapshot satisfies State and its worker implements Planner.
package scheduler
