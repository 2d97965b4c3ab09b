package taskrunner

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/client/artifact"
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/logmon"
	"github.com/drover-sched/drover/client/restarts"
	"github.com/drover-sched/drover/client/state"
	"github.com/drover-sched/drover/client/taskuser"
	"github.com/drover-sched/drover/client/template"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/telemetry"
	"github.com/drover-sched/drover/structs"
)

// Config is what a TaskRunner needs.
type Config struct {
	Alloc    *structs.Allocation
	Task     *structs.Task
	Node     *structs.Node
	Region   string
	AllocDir *allocdir.AllocDir
	Driver   drivers.Driver
	StateDB  state.DB
	Clock    clock.Clock
	Logger   hclog.Logger
	// HostEnv is the base of the environment of a task whose driver
	// passes the agent's environment on (drivers.Capabilities.HostEnv),
	// already without the client's env.denylist.
	HostEnv map[string]string
	// Users is the client's user.denylist (the user hook).
	Users taskuser.Policy
	// MaxKillTimeout caps the task's kill_timeout.
	MaxKillTimeout time.Duration
	// StartGate must be closed before the task is started or restarted.
	StartGate <-chan struct{}
	// OnUpdate is called from Run after every state change.
	OnUpdate func()
	// Restore makes the runner pick up its state and handle from StateDB.
	Restore bool
	// Artifacts fetches the task's artifacts; nil is a zero Fetcher
	// (see artifact.Sources for what that allows).
	Artifacts *artifact.Fetcher
	// Templates renders the task's templates; nil is
	// template.DefaultRenderer, shared by the whole client.
	Templates *template.Renderer
	// Services reads native services for templates; nil leaves
	// nomadService without data.
	Services ServiceCatalog
	// Metrics counts the task's starts, restarts and ends (metrics.go);
	// nil drops them.
	Metrics *metrics.Metrics
	// Network is the alloc's network namespace, for every task to join;
	// zero is the host's network.
	Network drivers.AllocNetwork
}

// TaskRunner runs one task. See the package doc for ownership.
type TaskRunner struct {
	cfg     Config
	logger  hclog.Logger
	clock   clock.Clock
	tracker restarts.Tracker
	// hooks is the task's hook list (hooks.go), fixed by New.
	hooks []Hook
	// updateHooksMu makes UpdateAlloc's update hooks run one at a time.
	updateHooksMu sync.Mutex

	// updateMu serialises update: states are stored in the order they
	// are made, and each is stored before anyone can read it.
	updateMu sync.Mutex
	mu       sync.Mutex
	alloc    *structs.Allocation
	state    *structs.TaskState
	handle   *drivers.TaskHandle

	killOnce   sync.Once
	killCh     chan struct{}
	killReason string
	shutOnce   sync.Once
	shutdownCh chan struct{}
	doneCh     chan struct{}
	// actions carries users' restarts and signals to Run (actions.go).
	actions chan *action

	logs *logmon.TaskLogger
	// metricLabels name the task in its counters (metrics.go).
	metricLabels []metrics.Label
}

// New returns a runner; call Run in a goroutine.
func New(cfg Config) *TaskRunner {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.StartGate == nil {
		open := make(chan struct{})
		close(open)
		cfg.StartGate = open
	}
	if cfg.OnUpdate == nil {
		cfg.OnUpdate = func() {}
	}
	cfg.Metrics = telemetry.OrDiscard(cfg.Metrics)
	jobType := structs.JobTypeService
	if cfg.Alloc.Job != nil {
		jobType = cfg.Alloc.Job.Type
	}
	h := fnv.New64a()
	h.Write([]byte(cfg.Alloc.ID + "/" + cfg.Task.Name))
	tr := &TaskRunner{
		cfg:        cfg,
		logger:     cfg.Logger.Named("task_runner").With("alloc_id", cfg.Alloc.ID, "task", cfg.Task.Name),
		clock:      clock.OrReal(cfg.Clock),
		tracker:    restarts.New(cfg.Task.RestartPolicy, jobType, cfg.Task, rand.New(rand.NewSource(int64(h.Sum64()))).Int63n),
		alloc:      cfg.Alloc,
		state:      &structs.TaskState{State: structs.TaskStatePending},
		killCh:     make(chan struct{}),
		shutdownCh: make(chan struct{}),
		doneCh:     make(chan struct{}),
		actions:    make(chan *action),
	}
	tr.hooks = newHooks(tr)
	tr.metricLabels = taskLabels(cfg.Alloc, cfg.Task.Name)
	return tr
}

// Name returns the task name.
func (tr *TaskRunner) Name() string { return tr.cfg.Task.Name }

// IsLeader reports whether the task is its group's leader.
func (tr *TaskRunner) IsLeader() bool { return tr.cfg.Task.Leader }

// TaskState returns a copy of the task's state.
func (tr *TaskRunner) TaskState() *structs.TaskState {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.state.Copy()
}

// Done is closed when Run has returned.
func (tr *TaskRunner) Done() <-chan struct{} { return tr.doneCh }

// UpdateAlloc records a newer version of the alloc; the next start uses
// it. The update hooks are told before it returns.
func (tr *TaskRunner) UpdateAlloc(a *structs.Allocation) {
	tr.mu.Lock()
	tr.alloc = a
	tr.mu.Unlock()
	tr.updateHooks(&UpdateRequest{Alloc: a})
}

// Kill asks Run to stop the task for good (never restarting it). It does
// not wait; use Done.
func (tr *TaskRunner) Kill(reason string) {
	tr.killOnce.Do(func() {
		tr.mu.Lock()
		tr.killReason = reason
		tr.mu.Unlock()
		close(tr.killCh)
	})
}

// Shutdown makes Run return without stopping the task, so a later client
// can re-attach to it. It does not wait; use Done.
func (tr *TaskRunner) Shutdown() { tr.shutOnce.Do(func() { close(tr.shutdownCh) }) }

// Stats samples the running task's resource usage.
func (tr *TaskRunner) Stats() (*drivers.TaskResourceUsage, error) {
	tr.mu.Lock()
	h := tr.handle
	tr.mu.Unlock()
	if h == nil {
		return nil, fmt.Errorf("task %q is not running", tr.cfg.Task.Name)
	}
	return tr.cfg.Driver.TaskStats(h.TaskID)
}

// update makes the next state (the change and an event), persists it,
// then publishes it and notifies the alloc runner. Persisting before
// publishing means that whatever the alloc runner reports to the servers
// is already what a restarted client would restore; updates are
// serialised so a slower write never overwrites a newer state.
func (tr *TaskRunner) update(ev *structs.TaskEvent, change func(s *structs.TaskState)) {
	tr.updateMu.Lock()
	defer tr.updateMu.Unlock()
	tr.mu.Lock()
	next := tr.state.Copy()
	tr.mu.Unlock()
	if change != nil {
		change(next)
	}
	if ev != nil {
		next.Events = append(next.Events, ev)
		if n := len(next.Events); n > maxEvents {
			next.Events = next.Events[n-maxEvents:]
		}
	}
	if tr.cfg.StateDB != nil {
		if err := tr.cfg.StateDB.PutTaskState(tr.cfg.Alloc.ID, tr.cfg.Task.Name, next.Copy()); err != nil {
			tr.logger.Error("failed to persist task state", "error", err)
		}
	}
	tr.mu.Lock()
	tr.state = next
	tr.mu.Unlock()
	tr.cfg.OnUpdate()
}

func (tr *TaskRunner) setHandle(h *drivers.TaskHandle) {
	tr.mu.Lock()
	tr.handle = h
	tr.mu.Unlock()
	if tr.cfg.StateDB == nil {
		return
	}
	var err error
	if h == nil {
		err = tr.cfg.StateDB.DeleteTaskHandle(tr.cfg.Alloc.ID, tr.cfg.Task.Name)
	} else {
		err = tr.cfg.StateDB.PutTaskHandle(tr.cfg.Alloc.ID, tr.cfg.Task.Name, h)
	}
	if err != nil {
		tr.logger.Error("failed to persist task handle", "error", err)
	}
}

// markDead records the task as dead for good and runs the stop hooks; Run
// returns right after.
func (tr *TaskRunner) markDead(ev *structs.TaskEvent, failed bool) {
	tr.countEnd(failed)
	now := tr.clock.Now()
	tr.update(ev, func(s *structs.TaskState) {
		s.State = structs.TaskStateDead
		s.Failed = s.Failed || failed
		s.FinishedAt = now
	})
	tr.stop()
}

// restore loads the persisted state. It returns the handle to re-attach
// to, or an exit result for a task that died while the client was down.
func (tr *TaskRunner) restore() (*drivers.TaskHandle, *drivers.ExitResult) {
	db := tr.cfg.StateDB
	if db == nil {
		return nil, nil
	}
	ts, err := db.GetTaskState(tr.cfg.Alloc.ID, tr.cfg.Task.Name)
	if err != nil {
		tr.logger.Error("failed to read task state", "error", err)
	}
	if ts != nil {
		tr.mu.Lock()
		tr.state = ts
		tr.mu.Unlock()
	}
	h, err := db.GetTaskHandle(tr.cfg.Alloc.ID, tr.cfg.Task.Name)
	if err != nil {
		tr.logger.Error("failed to read task handle", "error", err)
	}
	if ts == nil || ts.State != structs.TaskStateRunning {
		return nil, nil
	}
	if h == nil {
		// Running without a handle: the client died between starting the
		// task and recording it. The process cannot be found again.
		return nil, &drivers.ExitResult{ExitUnknown: true}
	}
	if err := tr.cfg.Driver.RecoverTask(h); err != nil {
		if !errors.Is(err, drivers.ErrTaskNotFound) {
			tr.logger.Warn("could not re-attach to task", "error", err)
		}
		tr.setHandle(nil)
		return nil, &drivers.ExitResult{ExitUnknown: true}
	}
	tr.mu.Lock()
	tr.handle = h
	tr.mu.Unlock()
	tr.logger.Info("re-attached to running task", "task_id", h.TaskID)
	// Report the restored state: after a reconnect the servers may think
	// the alloc unknown until the client says otherwise.
	tr.cfg.OnUpdate()
	return h, nil
}
