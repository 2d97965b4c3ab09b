// Package allocrunner runs one allocation: it builds the alloc directory,
// runs one task runner per task, derives the alloc's client status from
// their states, stops the other tasks when one fails or the leader dies,
// and stops everything when the servers want the alloc stopped.
//
// # Ownership
//
// Each AllocRunner has one goroutine, Run, the loop (loop.go). It alone
// owns the runner's state (runState): the server's version of the alloc,
// the status reported last, the kill, shutdown and destroy flags, the
// start gate and the lifecycle phase gates (lifecycle.go), and the
// health watch and verdict, for a deployment or a migration (health.go). Nothing else reads or
// writes those fields, so they need no lock. The loop takes, one at a
// time:
//
//   - commands from any goroutine (the client's alloc watcher, heartbeat
//     fencing and GC): Update, Confirm, Kill, Shutdown and Destroy each
//     send the loop a function to run on it and wait until it has run;
//   - task changes: each task runner calls wake from its own goroutine
//     after changing its state, and the loop then advances the lifecycle,
//     stops siblings, judges health and reports;
//   - the health watch's timers, and the end of the last task runner;
//   - a check's status change (checks.go): the alloc's service checks run
//     on goroutines of their own (client/checks), which the loop starts,
//     replaces on an update that changes them, and stops.
//
// It is the only caller of OnUpdate, so status reports for one alloc are
// produced in order. Once every task runner has returned it closes Done
// and makes no more reports, but goes on taking commands (a newer alloc
// version, a Destroy) until Shutdown or Destroy; a command sent after that
// is dropped.
//
// Readers on other goroutines (Alloc, IsTerminal, TaskState, TaskStats,
// and a user's RestartTasks and SignalTasks in actions.go) read the view
// the loop publishes after each change (view.go): an immutable copy of
// the fields they need, behind an atomic pointer. Each task runner owns
// its own task state; readers ask it directly, and a restart or signal is
// carried out on the task runner's goroutine.
//
// # The alloc's network
//
// A group whose network mode is bridge, none or cni/* gets its own
// network namespace (network.go, through Config.Network) on the loop,
// before the first task runner is made, so every task starts in it; a
// restored runner re-attaches to the one it had. The loop tears it down
// once every task runner has returned (unless the client is shutting
// down, when the next client takes it over), and again, harmlessly, on
// Destroy.
//
// # The start gate
//
// A runner restored after a client restart re-attaches to tasks that are
// still running but starts nothing until the servers have confirmed that
// the alloc should still run (Confirm, or an Update whose desired status is
// run). A reconnecting client therefore never restarts an alloc whose
// desired status became stop while it was away (DESIGN.md, "Node lifecycle
// and disconnects").
package allocrunner
