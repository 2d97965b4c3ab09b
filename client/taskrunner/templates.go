package taskrunner

import (
	"context"
	"errors"
	"os"
	"strconv"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/template"
	"github.com/drover-sched/drover/helper/childproc"
	"github.com/drover-sched/drover/structs"
)

// templateHook is the prestart hook that renders the task's `template`
// blocks, and hands on the environment the attempt gets: the environment
// so far with the variables of `env = true` templates on top, as Nomad
// sets them last.
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
type templateHook struct {
	// renderer is nil for template.DefaultRenderer, shared by the whole
	// client.
	renderer *template.Renderer
	hookDeps
}

func (*templateHook) Name() string { return "template" }

func (h *templateHook) Prestart(ctx context.Context, req *PrestartRequest, resp *PrestartResponse) error {
	if len(req.Task.Templates) == 0 {
		return nil
	}
	renderer := h.renderer
	if renderer == nil {
		renderer = template.DefaultRenderer()
	}
	env := req.Env
	vars, err := renderer.Render(ctx, template.Input{
		Templates:   req.Task.Templates,
		TaskDir:     req.TaskDir.Dir,
		SharedDir:   req.AllocDir.SharedDir,
		Env:         env.Map(),
		Interpolate: env.ReplaceEnv,
		Now:         h.clock.Now,
		Chown:       os.Geteuid() == 0,
	})
	if err != nil && ctx.Err() != nil {
		return &drivers.RecoverableError{Err: err}
	}
	if err != nil {
		h.logger.Warn("failed to render template", "error", err)
		h.events.EmitEvent(templateFailedEvent(h.clock.Now(), err))
		return &drivers.RecoverableError{Err: err}
	}
	resp.Env = env.With(vars)
	return nil
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
