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
// Each step is one function (README.md lists them), taking what it reads
// and returning what it found; the group's decisions, one per alloc, are
// passed to each step in turn, so a later step sees what an earlier one
// stopped.
//
// Disconnects, in the terms of DESIGN.md's allocation state machine (the
// server's two marks, lost and unknown, both made through a plan):
//
//   - running -> unknown: a running alloc on a node that becomes
//     disconnected, when its group has a disconnect window
//     (disconnect.lost_after) or forbids rescheduling on lost nodes. It
//     keeps its slot and may get a replacement (disconnect.replace).
//   - pending -> lost: a pending alloc on a node that becomes disconnected.
//     Its client never reported it started, so there is nothing to
//     reconnect to: it is stopped as lost and replaced at once, as on a
//     down node (Nomad does the same). Only a group that forbids
//     rescheduling on lost nodes keeps it, as unknown.
//   - unknown -> lost: when the disconnect window ends with the node still
//     away, or when the node is ready again but its client has not
//     reported the alloc within Input.ReportWindow (DefaultReportWindow),
//     for which the evaluation that finds it waiting creates a follow-up,
//     or when the node goes down.
//   - unknown -> running|complete|failed: the client's report after its
//     node is ready again; the reconnect decision follows.
//
// Deployments: a service group with a rolling update block rolls each
// job version out under a deployment (Input.Deployment, the job's latest).
// The reconciler creates one when a version places allocs, paces
// destructive updates by the health its clients report (at most
// update.max_parallel not yet healthy, none past an unhealthy one), places
// canaries first and waits for their promotion, places nothing new while
// the deployment is paused, failed or cancelled, cancels the deployment of
// an older version and marks the current one successful once every group
// has its healthy allocs. The deployment watcher on the leader owns every
// other status change (failing, pausing, promoting, reverting).
//
// The system and sysbatch schedulers, which place one allocation per node
// rather than Count per group, use ReconcileSystem.
package reconciler
