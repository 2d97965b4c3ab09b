package taskrunner

import (
	"context"

	"github.com/drover-sched/drover/client/drivers"
)

// The runner's side of the hooks: each stage calls the hooks that
// implement it, in list order, on Run's goroutine (Update excepted, see
// UpdateHook).

// prestart runs the prestart hooks for one attempt and returns the
// environment they built. The first failure ends the stage: later hooks
// do not run for this attempt.
func (tr *TaskRunner) prestart(req *PrestartRequest) (*PrestartRequest, error) {
	ctx, cancel := tr.untilStopped()
	defer cancel()
	for _, h := range tr.hooks {
		ph, ok := h.(PrestartHook)
		if !ok {
			continue
		}
		var resp PrestartResponse
		if err := ph.Prestart(ctx, req, &resp); err != nil {
			return req, err
		}
		if resp.Env != nil {
			req.Env = resp.Env
		}
		if resp.User != nil {
			req.User = resp.User
		}
	}
	return req, nil
}

// poststart tells the hooks an attempt is running.
func (tr *TaskRunner) poststart(h *drivers.TaskHandle, reattached bool) {
	alloc, task := tr.current()
	ctx, cancel := tr.untilStopped()
	defer cancel()
	req := &PoststartRequest{Alloc: alloc, Task: task, Handle: h, Reattached: reattached}
	for _, hook := range tr.hooks {
		if ph, ok := hook.(PoststartHook); ok {
			if err := ph.Poststart(ctx, req); err != nil {
				tr.logger.Warn("poststart hook failed", "hook", hook.Name(), "error", err)
			}
		}
	}
}

// exited tells the hooks an attempt's process has ended. A kill does not
// cut them short: it is often what ended the process, and what the hooks
// undo (a registration of the process) is owed all the more.
func (tr *TaskRunner) exited(res *drivers.ExitResult) {
	alloc, task := tr.current()
	req := &ExitedRequest{Alloc: alloc, Task: task, Result: res}
	for _, hook := range tr.hooks {
		if eh, ok := hook.(ExitedHook); ok {
			if err := eh.Exited(context.Background(), req); err != nil {
				tr.logger.Warn("exited hook failed", "hook", hook.Name(), "error", err)
			}
		}
	}
}

// stop tells the hooks the task is dead for good. A shutdown does not cut
// them short: the task is already dead and their work (releasing what
// the task held) is owed either way.
func (tr *TaskRunner) stop() {
	alloc, task := tr.current()
	req := &StopRequest{Alloc: alloc, Task: task}
	for _, hook := range tr.hooks {
		if sh, ok := hook.(StopHook); ok {
			if err := sh.Stop(context.Background(), req); err != nil {
				tr.logger.Warn("stop hook failed", "hook", hook.Name(), "error", err)
			}
		}
	}
}

// updateHooks tells the hooks of a newer alloc, one update at a time.
func (tr *TaskRunner) updateHooks(req *UpdateRequest) {
	tr.updateHooksMu.Lock()
	defer tr.updateHooksMu.Unlock()
	for _, hook := range tr.hooks {
		if uh, ok := hook.(UpdateHook); ok {
			if err := uh.Update(context.Background(), req); err != nil {
				tr.logger.Warn("update hook failed", "hook", hook.Name(), "error", err)
			}
		}
	}
}

// untilStopped returns a context that Kill or Shutdown cancels, for a
// stage that may take long. The goroutine that watches ends with the
// stage (cancel).
func (tr *TaskRunner) untilStopped() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-tr.killCh:
		case <-tr.shutdownCh:
		case <-ctx.Done():
		}
		cancel()
	}()
	return ctx, cancel
}
