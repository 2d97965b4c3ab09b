// Package taskrunner runs one task of an allocation through its life:
// start it with its driver, capture its logs, wait for it, apply the
// restart policy when it exits, stop it (kill signal, then SIGKILL after
// kill_timeout) when asked, and record every step as task events and a
// TaskState that the alloc runner turns into the alloc's client status.
//
// # Ownership
//
// Each TaskRunner has one goroutine, Run, which owns the task's lifecycle
// and is the only writer of its TaskState and driver handle. Both are
// guarded by a mutex so that the alloc runner and the HTTP layer can read
// copies. Other goroutines talk to Run only through Kill, Shutdown,
// UpdateAlloc, and a user's Restart and Signal, which Run carries out
// itself (actions.go). Every state change is persisted to the client's state DB
// before OnUpdate tells the alloc runner.
//
// Run's work before a start that can take long (downloading artifacts,
// rendering templates in a child process) runs under a context that a
// short-lived goroutine cancels on Kill or Shutdown; the goroutine ends
// with that step. A start cut short by Kill leaves the task killed, not
// failed.
//
// # Restore
//
// A runner created with Restore looks up its state and handle in the DB. A
// task that was dead stays dead. A task whose process is still alive is
// re-attached: no Started event, no restart, it stays running. A task whose
// process is gone died while the client was down: its exit code is
// unknown, it is treated as a failure and the restart policy decides. Any
// (re)start, restored or not, first waits for StartGate, which the alloc
// runner opens only once the servers have confirmed the alloc should run:
// desired status stop always wins over a local wish to restart.
package taskrunner
