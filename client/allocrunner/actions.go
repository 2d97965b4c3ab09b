package allocrunner

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/drover-sched/drover/client/taskrunner"
	"github.com/drover-sched/drover/structs"
)

// RestartTasks restarts one task in place, or with task "" every task
// that is running (see TaskRunner.Restart), as Nomad's `alloc restart`
// does without -all-tasks: main tasks and sidecars restart, while
// lifecycle tasks that have completed (an init task) are not run again.
// The caller has checked that a named task belongs to the alloc.
func (ar *AllocRunner) RestartTasks(ctx context.Context, task string) error {
	targets, err := ar.actionTargets(task)
	if err != nil {
		return err
	}
	return forEach(targets, func(tr *taskrunner.TaskRunner) error { return tr.Restart(ctx) })
}

// SignalTasks sends a signal to one task, or with task "" to every task
// that is running.
func (ar *AllocRunner) SignalTasks(ctx context.Context, task, signal string) error {
	targets, err := ar.actionTargets(task)
	if err != nil {
		return err
	}
	return forEach(targets, func(tr *taskrunner.TaskRunner) error { return tr.Signal(ctx, signal) })
}

// actionTargets picks the task runners a restart or signal applies to. An
// alloc being stopped takes neither: its tasks are going away.
func (ar *AllocRunner) actionTargets(task string) ([]*taskrunner.TaskRunner, error) {
	v := ar.view()
	if v.killing || v.alloc.ServerTerminalStatus() {
		return nil, fmt.Errorf("%w: the allocation is being stopped", taskrunner.ErrTaskNotRunning)
	}
	if task != "" {
		tr := v.tasks.runners[task]
		if tr == nil {
			return nil, fmt.Errorf("%w: task %q has not been set up yet", taskrunner.ErrTaskNotRunning, task)
		}
		return []*taskrunner.TaskRunner{tr}, nil
	}
	var out []*taskrunner.TaskRunner
	for _, tr := range v.tasks.inOrder() {
		if tr.TaskState().State == structs.TaskStateRunning {
			out = append(out, tr)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no task of the allocation is running", taskrunner.ErrTaskNotRunning)
	}
	return out, nil
}

// forEach runs f on every runner at once, so that the kill timeouts of a
// restart overlap rather than add up, and joins the errors.
func forEach(runners []*taskrunner.TaskRunner, f func(*taskrunner.TaskRunner) error) error {
	errs := make([]error, len(runners))
	var wg sync.WaitGroup
	for i, tr := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(tr)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
