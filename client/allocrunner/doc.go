// Package allocrunner runs one allocation: it builds the alloc directory,
// runs one task runner per task, derives the alloc's client status from
// their states, stops the other tasks when one fails or the leader dies,
// and stops everything when the servers want the alloc stopped.
//
// # Ownership
//
// Each AllocRunner has one goroutine, Run. It is the only caller of
// OnUpdate, so status reports for one alloc are produced in order. The
// alloc (the server's version) and the last reported status are guarded by
// a mutex; Update, Kill, Confirm, Shutdown and Destroy may be called from
// any goroutine (the client's alloc watcher and GC call them), and so may
// a user's RestartTasks and SignalTasks (actions.go), which each task
// runner carries out on its own goroutine.
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
