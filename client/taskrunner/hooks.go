package taskrunner

import (
	"context"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/taskenv"
	"github.com/drover-sched/drover/client/taskuser"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// A task's life is the runner's loop (run.go) plus a list of hooks. The
// runner owns the process, the state and the restart policy; a hook owns
// one feature around the process (a payload file, artifacts, templates;
// later health checks, service registrations, volume mounts). A hook
// implements Hook and any of the stage interfaces below, only those it
// has work for, and is added to the list in newHooks. The package doc says
// when the runner calls each stage.

// Hook is one step of a task's life. Its name is what logs call it.
type Hook interface {
	Name() string
}

// PrestartRequest is the attempt about to start, as the prestart hooks see
// it. The runner makes one per attempt.
type PrestartRequest struct {
	// Alloc is the newest version of the alloc the runner was given.
	Alloc *structs.Allocation
	// Task is the task as the alloc's job defines it now.
	Task     *structs.Task
	AllocDir *allocdir.AllocDir
	TaskDir  allocdir.TaskDir
	// Env is the task's environment as the hooks before built it; nil
	// until the env hook ran.
	Env *taskenv.Env
	// User is the user the task runs as, when the user hook gave it the
	// task's directories; nil when the task runs as the client's user or
	// as one only the driver knows. Files the client writes for the task
	// are made this user's.
	User *taskuser.User
}

// PrestartResponse is what a prestart hook hands on.
type PrestartResponse struct {
	// Env, if set, replaces the environment for the hooks that follow and
	// for the driver.
	Env *taskenv.Env
	// User, if set, is the task's user for the hooks that follow.
	User *taskuser.User
}

// PrestartHook prepares an attempt before the driver starts it. It runs
// before every start, restarts included, but not when the runner
// re-attaches to a process that outlived a client restart: a hook whose
// work must happen once per alloc records that it is done (as the
// artifact hook does on disk).
//
// ctx is cancelled when the task is killed or the client shuts down. A
// hook that fails reports it as a task event itself (hookFailedEvent,
// unless a more precise event type fits) and returns the error: the start
// fails, and the restart policy judges the error (drivers.RecoverableError
// to allow a retry). A failure caused by ctx's cancellation needs no
// event: the runner records the kill, or nothing on a shutdown.
type PrestartHook interface {
	Hook
	Prestart(ctx context.Context, req *PrestartRequest, resp *PrestartResponse) error
}

// PoststartRequest is a started (or re-attached) attempt.
type PoststartRequest struct {
	Alloc  *structs.Allocation
	Task   *structs.Task
	Handle *drivers.TaskHandle
	// Reattached says the process outlived a client restart and the
	// prestart hooks did not run for it in this client.
	Reattached bool
}

// PoststartHook runs once the driver has started an attempt, and once the
// runner has re-attached to a process after a client restart. ctx is
// cancelled on Kill and Shutdown. Its error is logged: the task runs on.
type PoststartHook interface {
	Hook
	Poststart(ctx context.Context, req *PoststartRequest) error
}

// ExitedRequest is an attempt that ended.
type ExitedRequest struct {
	Alloc *structs.Allocation
	Task  *structs.Task
	// Result is how the process ended; ExitUnknown when no one saw it
	// (it died while the client was down, or the driver lost it).
	Result *drivers.ExitResult
}

// ExitedHook runs after each attempt's process has ended, whatever ended
// it (its own exit, a kill, a user's restart), before the restart policy
// decides what follows. Its ctx is never cancelled: a kill is often what
// ended the process, and the hook's work is owed all the same. Its error
// is logged.
type ExitedHook interface {
	Hook
	Exited(ctx context.Context, req *ExitedRequest) error
}

// StopRequest is a task that is dead for good.
type StopRequest struct {
	Alloc *structs.Allocation
	Task  *structs.Task
}

// StopHook runs once when the task is dead and will not start again,
// after its dead state is recorded and before Done is closed, so whoever
// waits on Done (the alloc runner, before it removes the alloc dir) finds
// the hooks' work finished. It does not run on Shutdown (the task lives
// on for a later client), nor for a task a restored runner finds already
// dead. Its error is logged.
type StopHook interface {
	Hook
	Stop(ctx context.Context, req *StopRequest) error
}

// UpdateRequest carries a newer version of the task's alloc.
type UpdateRequest struct {
	Alloc *structs.Allocation
}

// UpdateHook is told of every UpdateAlloc. It runs on UpdateAlloc's
// caller, one update at a time and after the runner recorded the alloc,
// so it must not block for long. Its error is logged.
type UpdateHook interface {
	Hook
	Update(ctx context.Context, req *UpdateRequest) error
}

// newHooks is the task's hook list in the order the runner calls it: the
// prestart order is the order Nomad prepares a task in, and a later hook
// may use what an earlier one made (templates render files the artifacts
// brought, with the environment the env hook built).
func newHooks(tr *TaskRunner) []Hook {
	deps := hookDeps{events: hookEvents{tr}, clock: tr.clock, logger: tr.logger}
	return []Hook{
		&userHook{hookDeps: deps, driver: tr.cfg.Driver, policy: tr.cfg.Users},
		&dispatchPayloadHook{hookDeps: deps},
		&envHook{node: tr.cfg.Node, region: tr.cfg.Region, hostEnv: tr.cfg.HostEnv, driver: tr.cfg.Driver},
		&artifactHook{hookDeps: deps, fetcher: tr.cfg.Artifacts},
		&templateHook{hookDeps: deps, rend: tr.cfg.Templates, catalog: tr.cfg.Services, region: tr.cfg.Region,
			task: tr, shutdown: tr.shutdownCh},
	}
}

// hookDeps is what the runner lends a hook that reports what it does: its
// event log, clock and logger, and nothing else of the runner.
type hookDeps struct {
	events eventEmitter
	clock  clock.Clock
	logger hclog.Logger
}

// eventEmitter records a task event without changing the task's state.
type eventEmitter interface {
	EmitEvent(ev *structs.TaskEvent)
}

// hookEvents lends the runner's event log to its hooks.
type hookEvents struct{ tr *TaskRunner }

func (e hookEvents) EmitEvent(ev *structs.TaskEvent) { e.tr.update(ev, nil) }
