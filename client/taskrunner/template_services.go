package taskrunner

import (
	"context"
	"reflect"
	"sync"
	"time"

	"github.com/drover-sched/drover/client/template"
	"github.com/drover-sched/drover/structs"
)

// ServiceCatalog reads the native service registrations a task's
// templates render from (nomadService, nomadServices): every registration
// of the alloc's namespace, once the catalog's index is past minIndex (0:
// at once), with the index of the answer. The client implements it with
// a blocking query, as its node.
type ServiceCatalog interface {
	ForAlloc(ctx context.Context, allocID string, minIndex uint64) ([]*structs.ServiceRegistration, uint64, error)
}

// taskControl is what a re-render acts on: the running task.
type taskControl interface {
	Restart(ctx context.Context) error
	Signal(ctx context.Context, signal string) error
}

// Bounds of the service watch's retry after a failed read.
const (
	serviceWatchRetryMin = time.Second
	serviceWatchRetryMax = 30 * time.Second
)

// serviceBasis is what the latest prestart rendered the service
// templates with: the watch re-renders them the same way with newer
// registrations.
type serviceBasis struct {
	allocID   string
	input     template.Input // Templates holds the service templates only
	index     uint64
	registers []*structs.ServiceRegistration
}

// serviceWatches runs the watches of one task's attempts: one per attempt
// whose templates read services, from Poststart until the attempt exits.
// Each is a goroutine the hook owns; Stop waits for all of them.
type serviceWatches struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// start begins watching for basis, ending any earlier watch.
func (w *serviceWatches) start(run func(ctx context.Context)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancel != nil {
		w.cancel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		run(ctx)
	}()
}

// end cancels the running watch; with wait, it also waits for every
// watch goroutine to return.
func (w *serviceWatches) end(wait bool) {
	w.mu.Lock()
	if w.cancel != nil {
		w.cancel()
		w.cancel = nil
	}
	w.mu.Unlock()
	if wait {
		w.wg.Wait()
	}
}

// watchServices re-renders the service templates whenever the
// registrations they read change, and acts on each template whose output
// changed by its change_mode: restart the task, send it change_signal, or
// nothing. It ends with ctx (the attempt's exit, a kill) or the client's
// shutdown.
func (h *templateHook) watchServices(ctx context.Context, b *serviceBasis) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-h.shutdown:
			cancel()
		case <-ctx.Done():
		}
	}()
	failures := 0
	for ctx.Err() == nil {
		regs, index, err := h.catalog.ForAlloc(ctx, b.allocID, b.index)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			d := serviceWatchRetryMin << min(failures, 5)
			d = min(d, serviceWatchRetryMax)
			failures++
			h.logger.Warn("reading services for templates failed; retrying", "error", err, "retry_in", d)
			select {
			case <-ctx.Done():
				return
			case <-h.clock.After(d):
			}
			continue
		}
		failures = 0
		if index <= b.index {
			continue // the blocking query timed out with nothing new
		}
		b.index = index
		if reflect.DeepEqual(regs, b.registers) {
			continue
		}
		b.registers = regs
		in := b.input
		in.Services = &template.ServiceData{Region: h.region, Registrations: regs}
		_, changed, err := h.renderer().RenderChanged(ctx, in)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			h.logger.Warn("failed to re-render templates after a service change", "error", err)
			h.events.EmitEvent(templateFailedEvent(h.clock.Now(), err))
			continue
		}
		h.act(ctx, b.input.Templates, changed)
	}
}

// act applies the change_mode of the changed templates: one restart for
// all that ask for one, else a signal per distinct change_signal.
func (h *templateHook) act(ctx context.Context, templates []*structs.Template, changed []int) {
	restart := false
	signals := map[string]bool{}
	for _, i := range changed {
		t := templates[i]
		switch t.ChangeMode {
		case structs.TemplateChangeModeRestart, "":
			restart = true
		case structs.TemplateChangeModeSignal:
			signals[t.ChangeSignal] = true
		case structs.TemplateChangeModeScript:
			h.logger.Warn("template re-rendered; change_mode script is not supported, the task is left as it is", "destination", t.DestPath)
		}
	}
	if restart {
		h.logger.Info("template re-rendered after a service change; restarting the task")
		if err := h.task.Restart(ctx); err != nil && ctx.Err() == nil {
			h.logger.Warn("restart after a template re-render failed", "error", err)
		}
		return
	}
	for sig := range signals {
		h.logger.Info("template re-rendered after a service change; signalling the task", "signal", sig)
		if err := h.task.Signal(ctx, sig); err != nil && ctx.Err() == nil {
			h.logger.Warn("signal after a template re-render failed", "signal", sig, "error", err)
		}
	}
}
