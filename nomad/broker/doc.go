// Package broker is the leader's queue of evaluations: the eval broker,
// which hands each ready evaluation to one scheduler worker at a time, and
// the blocked evals, which hold evaluations that found no room until the
// capacity they wait for appears.
//
// # What it owns
//
//   - EvalBroker: ready queues per scheduler type, in priority order; one
//     evaluation per job outstanding at a time (the newest waiting one
//     follows, older waiting ones become cancelable); a nack timer per
//     outstanding evaluation, so a worker that dies gives its evaluation
//     back; a delivery limit, after which the evaluation goes to the
//     failed queue; delayed evaluations (WaitUntil) on the injected clock.
//   - BlockedEvals: blocked evaluations by job and by node class or node,
//     woken by Unblock (capacity changed in a class, on a node) with the
//     index of the change, so one that missed a change made after its
//     snapshot is woken at once.
//   - The leader loops over both: ReapFailedEvals (writes failed
//     evaluations and their follow-ups), ReapCancelableEvals (writes the
//     canceled ones) and PeriodicUnblockFailed.
//
// # What it needs
//
// A clock (helper/clock), a logger, metrics, and for its loops an
// EvalWriter that commits evaluations through raft. It reads no state
// store and knows nothing of the server: the server enables both queues
// when it gains leadership, restores them from state, and disables them
// when it loses it. Nothing here survives a leader change; state does.
package broker
