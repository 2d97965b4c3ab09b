package taskrunner

import (
	"context"
	"errors"
	"os"
	"strconv"
	"time"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/taskenv"
	"github.com/drover-sched/drover/client/template"
	"github.com/drover-sched/drover/helper/childproc"
	"github.com/drover-sched/drover/structs"
)

// renderTemplates renders the task's `template` blocks before an attempt
// starts, and returns the environment the attempt gets: env with the
// variables of `env = true` templates on top, as Nomad sets them last.
//
// It runs before every start, restarts included: the sources are static,
// so a fresh render is what Nomad's watcher would have kept on disk, with
// a fresh timestamp and what file() finds now.
//
// A template that fails is a failed start: a "Task hook failed" event (as
// Nomad reports a failed prestart hook) names the template and the error,
// and the error is recoverable, so the restart policy decides whether to
// try again, as for any failed start.
//
// The templates render in a child process (see template.Renderer), all of
// one start in one child, so a template that spins or grows is stopped by
// the renderer's limits, and Kill or Shutdown kill the child at once: the
// task's start then fails without an event, and Run sees the kill.
func (tr *TaskRunner) renderTemplates(task *structs.Task, td allocdir.TaskDir, env *taskenv.Env) (*taskenv.Env, error) {
	if len(task.Templates) == 0 {
		return env, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-tr.killCh:
		case <-tr.shutdownCh:
		case <-ctx.Done():
		}
		cancel()
	}()
	renderer := tr.cfg.Templates
	if renderer == nil {
		renderer = template.DefaultRenderer()
	}
	vars, err := renderer.Render(ctx, template.Input{
		Templates:   task.Templates,
		TaskDir:     td.Dir,
		SharedDir:   tr.cfg.AllocDir.SharedDir,
		Env:         env.Map(),
		Interpolate: env.ReplaceEnv,
		Now:         tr.clock.Now,
		Chown:       os.Geteuid() == 0,
	})
	if err != nil && ctx.Err() != nil {
		return nil, &drivers.RecoverableError{Err: err}
	}
	if err != nil {
		tr.logger.Warn("failed to render template", "error", err)
		tr.update(templateFailedEvent(tr.clock.Now(), err), nil)
		return nil, &drivers.RecoverableError{Err: err}
	}
	return env.With(vars), nil
}

// templateFailedEvent reports a template that could not be rendered, in
// Nomad's words: a failed prestart hook whose message starts with the
// hook's name, shown as "Template failed: ...".
func templateFailedEvent(now time.Time, err error) *structs.TaskEvent {
	e := newEvent(structs.TaskHookFailed, now)
	e.Message = "template: " + err.Error()
	e.DisplayMessage = "Template failed: " + err.Error()
	var te *template.Error
	if errors.As(err, &te) {
		e.Details["template_index"] = strconv.Itoa(te.Index)
		e.Details["destination"] = te.Destination
	}
	var le *childproc.LimitError
	if errors.As(err, &le) {
		e.Details["limit"] = string(le.Limit)
	}
	return e
}
