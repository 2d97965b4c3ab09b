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
// # Hooks
//
// What happens around the task's process is a list of hooks (hooks.go),
// each in its own file; the runner knows only the stages. A hook
// implements the stage interfaces it has work for. The list, in the order
// every stage calls it:
//
//	user              prestart: refuse a user the client's user.denylist denies for the driver; give
//	                  an isolated task's local/, secrets/ and tmp/ to the user it runs as
//	dispatch_payload  prestart: write the dispatched job's payload into local/
//	env               prestart: build the task's environment (what of the agent's it gets, and
//	                  the paths of its directories, follow the driver's Capabilities)
//	artifacts         prestart: download the artifacts not yet fetched for the alloc
//	template          prestart: render the templates in a child process, add env = true variables;
//	                  poststart to exited: re-render templates reading native services when they
//	                  change, then restart or signal by change_mode (template_services.go)
//
// Who calls what, and when:
//
//   - PrestartHook: Run, before every start (restarts included), after
//     StartGate opened; then the driver starts the task. Not for a process
//     a restored runner re-attached to. A hook fails the start: it records
//     its event ("Task hook failed", or its own type), later hooks do not
//     run, and the restart policy judges the error.
//   - PoststartHook: Run, after the Started event, and after re-attaching.
//   - ExitedHook: Run, after each attempt's process ended (its own exit, a
//     kill, a user's restart, or a death while the client was down), before
//     the restart policy decides.
//   - StopHook: Run, once, when the task is dead for good, before Done is
//     closed; never on Shutdown.
//   - UpdateHook: UpdateAlloc's caller (the alloc runner), one at a time.
//
// Prestart and poststart hooks run under a context that a short-lived
// goroutine cancels on Kill or Shutdown; the goroutine ends with the
// stage. Exited, stop and update hooks get one that is never cancelled. A start cut short by Kill leaves the task killed, not
// failed; one cut short by Shutdown records nothing (no restart), so the
// next client starts the task afresh.
//
// A feature that needs the task's life (health checks, service
// registrations, volume mounts) is a new hook in newHooks, not a change
// to Run.
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
