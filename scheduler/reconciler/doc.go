// Package reconciler decides what should happen to a job's allocations,
// without choosing nodes.
//
// It is a pure function: Reconcile takes an Input (the job, every allocation
// the job has, the nodes those allocations sit on, the job's evaluations, the
// evaluation being processed and the time) and returns a Result (what to
// stop, what to place, what to mark unknown, what to update in place, which
// follow-up evaluations to create and which to cancel). It reads no clock,
// makes no random choice of its own (follow-up evaluation IDs come from the
// caller's seeded generator) and does no I/O, so the same input always gives
// the same result and every decision can be table-tested.
//
// The decisions are made per task group in three steps, shown in README.md:
//
//  1. Sort: every allocation lands in exactly one named bucket (Untainted,
//     Migrate, Lost, Disconnecting, Reconnecting, Expired, Unknown, Failed,
//     Ignore), from its own status and the status of its node.
//  2. Decide per bucket: reconnects pick a survivor, failed allocations are
//     rescheduled now, later or never, lost ones are replaced, disconnecting
//     ones are marked unknown and perhaps replaced, draining ones migrate.
//  3. Count: the allocations and pending replacements that hold one of the
//     group's Count slots are compared with Count; extra slots are given up
//     (highest name index first), missing slots are placed (lowest free name
//     index first), and the survivors of an older job version are updated in
//     place or destructively, at most update.max_parallel destructive updates
//     per evaluation.
//
// The system and sysbatch schedulers, which place one allocation per node
// rather than Count per group, use ReconcileSystem.
package reconciler
