package taskrunner

import (
	"context"
	"errors"
	"fmt"
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
//
// Templates that read native services (nomadService, nomadServices) get
// the registrations of the alloc's namespace, read from the servers
// before the render; while the attempt runs, a watch (template_services.go)
// re-renders them when the registrations change and acts on change_mode.
type templateHook struct {
	// rend is nil for template.DefaultRenderer, shared by the whole
	// client.
	rend *template.Renderer
	// catalog reads services for templates; nil leaves nomadService
	// without data (it fails the render, saying so).
	catalog  ServiceCatalog
	region   string
	task     taskControl
	shutdown <-chan struct{}
	hookDeps

	// basis is what the latest prestart rendered service templates with,
	// nil if none; Prestart and Poststart both run on Run's goroutine.
	basis   *serviceBasis
	watches serviceWatches
}

func (*templateHook) Name() string { return "template" }

func (h *templateHook) renderer() *template.Renderer {
	if h.rend == nil {
		return template.DefaultRenderer()
	}
	return h.rend
}

func (h *templateHook) Prestart(ctx context.Context, req *PrestartRequest, resp *PrestartResponse) error {
	h.basis = nil
	if len(req.Task.Templates) == 0 {
		return nil
	}
	env := req.Env
	in := template.Input{
		Templates: req.Task.Templates,
		TaskDir:   req.TaskDir.Dir,
		SharedDir: req.AllocDir.SharedDir,
		// `env` reads the task's environment, never the agent's.
		Env: env.Map(),
		// Destinations name the task's directories where the client
		// finds them, not where a chroot mounts them.
		Interpolate: env.WithDirs(hostDirs(req)).ReplaceEnv,
		Now:         h.clock.Now,
		Chown:       os.Geteuid() == 0,
	}
	if u := req.User; u != nil {
		in.Owner = &template.Owner{UID: u.UID, GID: u.GID}
	}
	basis, err := h.readServices(ctx, req.Alloc.ID, in)
	if err != nil {
		if ctx.Err() == nil {
			h.logger.Warn("failed to read services for templates", "error", err)
			h.events.EmitEvent(templateFailedEvent(h.clock.Now(), err))
		}
		return &drivers.RecoverableError{Err: err}
	}
	if basis != nil {
		in.Services = basis.input.Services
	}
	vars, err := h.renderer().Render(ctx, in)
	if err != nil && ctx.Err() != nil {
		return &drivers.RecoverableError{Err: err}
	}
	if err != nil {
		h.logger.Warn("failed to render template", "error", err)
		h.events.EmitEvent(templateFailedEvent(h.clock.Now(), err))
		return &drivers.RecoverableError{Err: err}
	}
	resp.Env = env.With(vars)
	h.basis = basis
	return nil
}

// readServices reads the catalog when a template uses it, and returns the
// basis a watch re-renders the service templates from (nil if none).
func (h *templateHook) readServices(ctx context.Context, allocID string, in template.Input) (*serviceBasis, error) {
	var uses []*structs.Template
	for _, t := range in.Templates {
		if template.UsesServices(t) {
			uses = append(uses, t)
		}
	}
	if len(uses) == 0 || h.catalog == nil {
		return nil, nil
	}
	regs, index, err := h.catalog.ForAlloc(ctx, allocID, 0)
	if err != nil {
		return nil, fmt.Errorf("reading services for nomadService: %w", err)
	}
	b := &serviceBasis{allocID: allocID, input: in, index: index, registers: regs}
	b.input.Templates = uses
	b.input.Services = &template.ServiceData{Region: h.region, Registrations: regs}
	return b, nil
}

// Poststart starts the service watch of the attempt prestart rendered.
// A task re-attached after a client restart has no basis (its prestart
// ran in the earlier client) and is not watched.
func (h *templateHook) Poststart(_ context.Context, _ *PoststartRequest) error {
	if b := h.basis; b != nil && h.task != nil {
		h.watches.start(func(ctx context.Context) { h.watchServices(ctx, b) })
	}
	return nil
}

// Exited ends the attempt's watch without waiting: the watch may be the
// one restarting the task, which is what ended the attempt.
func (h *templateHook) Exited(context.Context, *ExitedRequest) error {
	h.watches.end(false)
	return nil
}

// Stop ends any watch and waits for every watch goroutine.
func (h *templateHook) Stop(context.Context, *StopRequest) error {
	h.watches.end(true)
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
