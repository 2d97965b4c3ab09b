// Package deploymentwatcher is the leader's deployment watcher: the loop
// that moves every running deployment on, or ends it, from what its
// allocations report and what the clock says, and the decisions about one
// deployment that the server's deployment endpoints share with it.
//
// # What it promises
//
// For each running deployment, on every change to it or its allocations
// and at its next progress deadline:
//
//   - Failing. A deployment fails when one of its allocations is reported
//     unhealthy ("Failed due to unhealthy allocations"; an allocation the
//     servers marked unknown, its node disconnected, does not count) or
//     when a group's progress_deadline passes without a new healthy
//     allocation ("Failed due to progress deadline"). A group that has
//     seen none yet counts from the deployment's creation; a group done,
//     or whose healthy canaries wait only for a promotion, has no
//     deadline.
//   - Auto-revert. When a group of a failing deployment asks for
//     auto_revert, the same raft entry registers the job's newest stable
//     earlier version again as a new version, and the description says
//     which ("... - rolling back to job version N"), or why not (no stable
//     version, or one with the same specification).
//   - Promotion. When every group waiting for a promotion asks for
//     auto_promote and has all its canaries healthy, the deployment is
//     promoted; one group without auto_promote holds back the others.
//   - Evaluations. A health change asks for one evaluation of the job, so
//     the scheduler places the next allocations. Requests are gathered for
//     250ms and written in one entry, one evaluation per job, however many
//     allocations changed. Every failure and promotion carries its own
//     evaluation.
//   - Paused, pending and blocked deployments wait; making a deployment
//     successful is the scheduler's (it sees when nothing is left to
//     place).
//   - A pass whose read or write fails is retried on the clock, 1s after
//     the first failure and twice as long after each further one, up to a
//     minute. A batch of evaluations that fails to be written is asked for
//     again on the next pass.
//
// Eval and FailureRequest are those decisions as functions of what they
// read, the time and an ID source, so the endpoints that promote, pause,
// resume, unblock, fail or set health by hand build the same entries.
//
// # Who owns what
//
// Run is one goroutine, started by the server when it gains leadership
// and stopped (its context cancelled) when it loses it; the server waits
// for it. It alone owns the Watcher's memory: each deployment's health as
// of the last evaluation it asked for, and the evaluations waiting for
// their batch. Nothing else is kept: deployments live in the state store
// and change only through raft, and a new leader's watcher, a new
// Watcher, starts by asking for one evaluation per running deployment, so
// a change made during the election is not missed. Evaluations still
// waiting for their batch when leadership goes are dropped for the same
// reason.
//
// # What it needs
//
// Config: State, a function returning the current state store as the
// narrow reader State (jobs, job versions, deployments, a deployment's
// allocations, the abandon channel a snapshot restore closes), whose
// watch sets wake the loop; Raft, the three writes (deployment status
// with its job and evaluation, promotion with its evaluation, a batch of
// evaluations); a clock from helper/clock; a logger; and an ID source.
// It does not import the server or nomad/state: the server's state store
// satisfies State as it is, and nomad/leader_deploymentwatcher.go adapts
// raft to Raft.
package deploymentwatcher
