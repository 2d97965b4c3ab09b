package checks

import (
	"context"
	"fmt"
	"maps"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/helper/clock"
)

// Config is what a Runner needs.
type Config struct {
	Clock  clock.Clock
	Logger hclog.Logger
	// Exec runs script checks (nil: they fail saying so).
	Exec Execer
	// Restart restarts a task whose check reached its check_restart
	// limit, counted by the task's restart policy. It may block until the
	// task has stopped; ctx is cancelled when the Runner stops.
	Restart func(ctx context.Context, task, reason string) error
	// OnChange is called, from a check's goroutine, after a check's
	// status changed. It must not block.
	OnChange func()
}

// Runner runs an alloc's checks. See the package doc for ownership.
type Runner struct {
	cfg    Config
	specs  []Spec
	prober *prober

	mu      sync.Mutex
	results map[string]Result
	started bool
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// New returns a Runner for specs, each with its initial status; Start
// starts probing.
func New(cfg Config, specs []Spec) *Runner {
	cfg.Clock = clock.OrReal(cfg.Clock)
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.OnChange == nil {
		cfg.OnChange = func() {}
	}
	r := &Runner{cfg: cfg, specs: specs, prober: newProber(cfg.Exec), results: make(map[string]Result, len(specs))}
	now := cfg.Clock.Now().Unix()
	for i := range specs {
		s := &specs[i]
		r.results[s.ID] = Result{ID: s.ID, Check: s.Name, Group: s.Group, Mode: s.Mode, Service: s.Service, Task: s.Task,
			Status: s.InitialStatus, Timestamp: now}
	}
	return r
}

// Specs returns the checks the Runner runs (nil for a nil Runner); the
// caller must not change them.
func (r *Runner) Specs() []Spec {
	if r == nil {
		return nil
	}
	return r.specs
}

// Len is the number of checks.
func (r *Runner) Len() int {
	if r == nil {
		return 0
	}
	return len(r.specs)
}

// Start starts one goroutine per check. It does nothing the second time,
// after Stop, or on a nil Runner (an alloc without checks).
func (r *Runner) Start() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return
	}
	r.started = true
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	for i := range r.specs {
		r.wg.Add(1)
		go r.run(ctx, &r.specs[i])
	}
}

// Started reports whether the checks run: Start has started them and
// Stop has not stopped them.
func (r *Runner) Started() bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cancel != nil
}

// Stop stops the checks and waits for their goroutines. The results stay
// readable. Stop is safe to call more than once, and on a nil Runner.
func (r *Runner) Stop() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.started = true // no Start after Stop
	cancel := r.cancel
	r.cancel = nil
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	r.wg.Wait()
}

// Results returns a copy of every check's latest result, by check ID.
func (r *Runner) Results() map[string]Result {
	if r == nil {
		return map[string]Result{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.results)
}

// Healthy reports whether every healthiness check passes (a warning
// passes for a check whose on_update is "ignore_warnings"). An alloc
// without checks is healthy.
func (r *Runner) Healthy() bool {
	if r == nil {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.specs {
		s := &r.specs[i]
		if s.Mode != ModeHealthiness {
			continue
		}
		switch st := r.results[s.ID].Status; {
		case st == StatusSuccess:
		case st == StatusWarning && s.IgnoreWarnings:
		default:
			return false
		}
	}
	return true
}

// run is one check's goroutine: probe, record, apply check_restart, wait
// for the interval, until ctx ends. The first probe runs at once.
func (r *Runner) run(ctx context.Context, s *Spec) {
	defer r.wg.Done()
	restarts := newRestartTracker(s.Restart, r.cfg.Clock.Now())
	for {
		pctx, cancel := context.WithTimeout(ctx, s.Timeout)
		out := r.prober.probe(pctx, s)
		cancel()
		if ctx.Err() != nil {
			return
		}
		now := r.cfg.Clock.Now()
		r.record(s, out, now.Unix())
		if restarts.observe(now, out.status) {
			r.restart(ctx, s)
		}
		select {
		case <-ctx.Done():
			return
		case <-r.cfg.Clock.After(s.Interval):
		}
	}
}

// record stores a probe's outcome and says so if the status changed.
func (r *Runner) record(s *Spec, out outcome, at int64) {
	r.mu.Lock()
	res := r.results[s.ID]
	changed := res.Status != out.status
	res.Status, res.StatusCode, res.Output, res.Timestamp = out.status, out.code, out.output, at
	r.results[s.ID] = res
	r.mu.Unlock()
	if changed {
		r.cfg.Logger.Debug("check status changed", "check", s.Name, "service", s.Service, "status", out.status)
		r.cfg.OnChange()
	}
}

// restart asks for the check's task to be restarted.
func (r *Runner) restart(ctx context.Context, s *Spec) {
	if s.Task == "" || r.cfg.Restart == nil {
		r.cfg.Logger.Warn("check_restart limit reached, but the check has no task to restart (set task in the check)", "check", s.Name, "service", s.Service)
		return
	}
	reason := fmt.Sprintf("healthcheck: check %q unhealthy", s.Name)
	r.cfg.Logger.Info("restarting task for a failing check", "task", s.Task, "check", s.Name)
	if err := r.cfg.Restart(ctx, s.Task, reason); err != nil && ctx.Err() == nil {
		r.cfg.Logger.Warn("check_restart could not restart the task", "task", s.Task, "check", s.Name, "error", err)
	}
}
