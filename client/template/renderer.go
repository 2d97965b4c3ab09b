package template

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/drover-sched/drover/helper/childproc"
	"github.com/drover-sched/drover/structs"
)

// A template is a program a job submitter wrote, run by the client agent:
// `{{ range 1000000000000 }}` spins for hours and a string doubled in a
// loop takes gigabytes, and a Go template cannot be stopped once it runs.
// So the client never renders a task's templates in its own process: a
// Renderer runs them in a child process of the agent's own executable
// (helper/childproc), all templates of one task start in one child, under
// limits no real template meets. The child reads the template sources
// and writes the destinations itself, through the same sandbox as
// Render; everything else it reads (the environment, the clock, the
// interpolated paths) the agent sends it.

// Default limits for rendering one task start's templates.
const (
	// DefaultRenderMemory is the child's heap limit.
	DefaultRenderMemory = 256 << 20
	// DefaultRenderTimeout is how long the child may run.
	DefaultRenderTimeout = 30 * time.Second
	// DefaultRenderConcurrency is how many renders run at once on a
	// client; more task starts wait for a slot.
	DefaultRenderConcurrency = 4
)

// maxAnswer bounds the child's answer: the variables of env templates,
// each template's output being bounded by maxOutput already.
const maxAnswer = maxOutput

// RendererConfig sets a Renderer's limits; zero fields take the defaults.
type RendererConfig struct {
	Memory      uint64
	Timeout     time.Duration
	Concurrency int
}

// Renderer renders task templates in child processes. It is safe for
// concurrent use; a client shares one between all its tasks, so the
// concurrency bound holds for the whole client.
type Renderer struct {
	runner *childproc.Runner
}

// NewRenderer returns a Renderer with cfg's limits.
func NewRenderer(cfg RendererConfig) *Renderer {
	if cfg.Memory == 0 {
		cfg.Memory = DefaultRenderMemory
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultRenderTimeout
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultRenderConcurrency
	}
	return &Renderer{runner: childproc.New(childproc.Config{
		Entry:       RenderEntry,
		Limits:      childproc.Limits{Heap: cfg.Memory, Wall: cfg.Timeout, Output: maxAnswer},
		Concurrency: cfg.Concurrency,
		// The child needs nothing of the agent's environment (which may
		// hold tokens): the task's own comes in the request.
		Env: nil,
	})}
}

var (
	defaultRendererOnce sync.Once
	defaultRenderer     *Renderer
)

// DefaultRenderer is the Renderer with the default limits, shared by the
// whole process.
func DefaultRenderer() *Renderer {
	defaultRendererOnce.Do(func() { defaultRenderer = NewRenderer(RendererConfig{}) })
	return defaultRenderer
}

// Render is the package's Render run in a child process. A template that
// fails is an *Error, as in process; one whose render was stopped by a
// limit is an *Error too, whose Err is a *LimitError naming the limit.
// When ctx ends the child is killed at once and ctx's error returned.
func (r *Renderer) Render(ctx context.Context, in Input) (map[string]string, error) {
	vars, _, err := r.RenderChanged(ctx, in)
	return vars, err
}

// RenderChanged is Render that also returns the indexes (into
// in.Templates) of the templates whose destination's content changed: a
// re-render while the task runs acts on those by their change_mode.
func (r *Renderer) RenderChanged(ctx context.Context, in Input) (map[string]string, []int, error) {
	if len(in.Templates) == 0 {
		return map[string]string{}, nil, nil
	}
	interpolate := in.Interpolate
	if interpolate == nil {
		interpolate = func(s string) string { return s }
	}
	now := time.Now
	if in.Now != nil {
		now = in.Now
	}
	req := childRequest{TaskDir: in.TaskDir, SharedDir: in.SharedDir, Env: in.Env, Now: now(), Chown: in.Chown, Owner: in.Owner, Services: in.Services}
	for _, t := range in.Templates {
		c := *t
		c.SourcePath, c.DestPath = interpolate(t.SourcePath), interpolate(t.DestPath)
		req.Templates = append(req.Templates, &c)
	}
	input, err := json.Marshal(req)
	if err != nil {
		return nil, nil, fmt.Errorf("rendering templates: %w", err)
	}
	out, err := r.runner.Run(ctx, input)
	if err != nil {
		return nil, nil, r.runError(ctx, in.Templates, err)
	}
	var ans childAnswer
	if err := json.Unmarshal(out, &ans); err != nil {
		return nil, nil, fmt.Errorf("rendering templates: the render child's answer is unreadable: %w", err)
	}
	if e := ans.Error; e != nil {
		if e.Index < 0 || e.Index >= len(in.Templates) {
			return nil, nil, fmt.Errorf("rendering templates: the render child blamed template %d of %d: %s", e.Index, len(in.Templates), e.Msg)
		}
		var cause error = errors.New(e.Msg)
		if e.PathEscapes {
			cause = &pathEscapesError{msg: e.Msg}
		}
		return nil, nil, &Error{Index: e.Index, Destination: in.Templates[e.Index].DestPath, Err: cause}
	}
	if ans.Vars == nil {
		ans.Vars = map[string]string{}
	}
	for _, c := range ans.Changed {
		if c < 0 || c >= len(in.Templates) {
			return nil, nil, fmt.Errorf("rendering templates: the render child named template %d of %d as changed", c, len(in.Templates))
		}
	}
	return ans.Vars, ans.Changed, nil
}

// runError says why a child gave no answer: blaming the template it was
// at when it reported one.
func (r *Renderer) runError(ctx context.Context, templates []*structs.Template, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("rendering templates: %w", ctx.Err())
	}
	var (
		le   *childproc.LimitError
		ee   *childproc.ExitError
		ce   *childproc.ChildError
		step string
	)
	switch {
	case errors.As(err, &le):
		step, err = le.Step, &LimitError{limit: le}
	case errors.As(err, &ee):
		step = ee.Step
		err = fmt.Errorf("the render process ended without an answer (%v): %s", ee.Err, ee.Stderr)
	case errors.As(err, &ce):
		return fmt.Errorf("rendering templates: %s", ce.Msg)
	}
	if i, perr := strconv.Atoi(step); perr == nil && i >= 0 && i < len(templates) {
		return &Error{Index: i, Destination: templates[i].DestPath, Err: err}
	}
	return fmt.Errorf("rendering templates: %w", err)
}

// LimitError is a render stopped by one of its Renderer's limits. It
// unwraps to the *childproc.LimitError, whose Limit names the limit.
type LimitError struct {
	limit *childproc.LimitError
}

func (e *LimitError) Error() string {
	l := e.limit.Limits
	switch e.limit.Limit {
	case childproc.LimitHeap:
		return fmt.Sprintf("rendering needed more than %d MiB of memory, the limit for a task's templates, and was stopped; "+
			"a template that builds large values (a string doubled in a loop, say) cannot be rendered", l.Heap>>20)
	case childproc.LimitWall:
		return fmt.Sprintf("rendering took longer than %s, the time limit for a task's templates, and was stopped; "+
			"a template that loops for long (range or loop over a large number, say) cannot be rendered", l.Wall)
	default:
		return fmt.Sprintf("the variables of the env templates are larger than %d MiB", l.Output>>20)
	}
}

func (e *LimitError) Unwrap() error { return e.limit }
