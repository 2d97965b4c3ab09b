package allocrunner

import (
	"sort"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/client/artifact"
	"github.com/drover-sched/drover/client/checks"
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/state"
	"github.com/drover-sched/drover/client/taskrunner"
	"github.com/drover-sched/drover/client/taskuser"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// Config is what an AllocRunner needs.
type Config struct {
	Alloc        *structs.Allocation
	Node         *structs.Node
	Region       string
	AllocDirBase string
	// Driver returns the named driver, or nil if it is not loaded.
	Driver  func(name string) drivers.Driver
	StateDB state.DB
	Clock   clock.Clock
	Logger  hclog.Logger
	HostEnv map[string]string
	// Users is the client's user.denylist, checked at every task start.
	Users          taskuser.Policy
	MaxKillTimeout time.Duration
	// OnUpdate receives the alloc's client-side fields after each change,
	// always from the runner's goroutine.
	OnUpdate func(update *structs.Allocation)
	// Restore re-attaches to the tasks of a restarted client; the start gate
	// stays shut until Confirm.
	Restore bool
	// Artifacts fetches the tasks' artifacts; nil is a zero Fetcher.
	Artifacts *artifact.Fetcher
	// Services reads native services for the tasks' templates.
	Services taskrunner.ServiceCatalog
	// Metrics is handed to the task runners; nil drops their counters.
	Metrics *metrics.Metrics
	// Network sets up the alloc's network namespace (network.go); nil
	// fails a group whose network mode needs one.
	Network Networker
}

// AllocRunner runs one allocation. See the package doc for which goroutine
// owns what.
type AllocRunner struct {
	cfg    Config
	logger hclog.Logger
	clock  clock.Clock
	dir    *allocdir.AllocDir

	// st is the runner's state, owned by Run's goroutine (loop.go).
	st runState

	// Channels into the loop: commands from callers, and wake-ups from the
	// task runners (and from the loop itself) that a task changed.
	cmds   chan command
	notify chan struct{}
	// checkChanged wakes the loop when a check's status changed, to judge
	// health again (checks.go).
	checkChanged chan struct{}

	// checks runs the services' checks; it holds nil when the alloc has
	// none. The loop replaces it when a newer alloc changes the checks;
	// readers on other goroutines load it.
	checks atomic.Pointer[checks.Runner]

	// published is the latest view (view.go), for readers on any
	// goroutine.
	published atomic.Pointer[view]

	doneCh chan struct{} // closed when every task runner has returned
	exited chan struct{} // closed when Run has returned
}

// New returns a runner; call Run in a goroutine.
func New(cfg Config) *AllocRunner {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.OnUpdate == nil {
		cfg.OnUpdate = func(*structs.Allocation) {}
	}
	ar := &AllocRunner{
		cfg:    cfg,
		logger: cfg.Logger.Named("alloc_runner").With("alloc_id", cfg.Alloc.ID),
		clock:  clock.OrReal(cfg.Clock),
		dir:    allocdir.New(cfg.AllocDirBase, cfg.Alloc.ID),
		st: runState{
			alloc:     cfg.Alloc,
			tasks:     &taskSet{},
			lifecycle: newLifecycle(),
			// A new alloc may start at once; a restored one waits for the
			// servers (Confirm).
			gateOpen: !cfg.Restore,
		},
		cmds:   make(chan command),
		notify: make(chan struct{}, 1),
		doneCh: make(chan struct{}),
		exited: make(chan struct{}),

		checkChanged: make(chan struct{}, 1),
	}
	ar.checks.Store(ar.newChecks(cfg.Alloc))
	if cfg.Restore {
		ar.st.status = cfg.Alloc.ClientStatus
	}
	ar.publish()
	return ar
}

// ID returns the alloc ID.
func (ar *AllocRunner) ID() string { return ar.cfg.Alloc.ID }

// AllocDir returns the alloc's directory layout.
func (ar *AllocRunner) AllocDir() *allocdir.AllocDir { return ar.dir }

// Done is closed when every task runner has returned.
func (ar *AllocRunner) Done() <-chan struct{} { return ar.doneCh }

// Update applies a newer server version of the alloc. An older version (a
// stale read) is ignored. Reports made from here on are based on this
// version (their AllocModifyIndex). Desired stop or evict stops the
// tasks; desired run confirms the alloc and opens the start gate. It
// returns once the runner has taken the version in.
func (ar *AllocRunner) Update(a *structs.Allocation) { ar.do(func() { ar.update(a) }) }

// Confirm tells a restored runner that the servers still want the alloc to
// run (its assignment lists it, unchanged, with desired status run).
func (ar *AllocRunner) Confirm() { ar.do(ar.confirm) }

// Kill stops every task for good. It does not wait; use Done.
func (ar *AllocRunner) Kill(reason string) { ar.do(func() { ar.kill(reason) }) }

// Shutdown stops the runner without stopping the tasks, and waits.
func (ar *AllocRunner) Shutdown() {
	ar.do(ar.shutdown)
	<-ar.exited
}

// Destroy stops the tasks, waits for them, and removes the alloc's
// directory and local state. The GC calls it; a second call does nothing.
func (ar *AllocRunner) Destroy() error {
	ar.Kill("alloc is being garbage collected")
	<-ar.doneCh
	var err error
	if ar.do(func() { err = ar.destroy() }) {
		return err
	}
	// Run has returned: after Shutdown (the loop then owns nothing any
	// more and the files are still there), or after an earlier Destroy.
	if !ar.st.destroyed {
		return ar.removeFiles()
	}
	return nil
}

// Alloc returns the server's version of the alloc with the client's
// current fields filled in.
func (ar *AllocRunner) Alloc() *structs.Allocation {
	v := ar.view()
	a := v.alloc.Copy()
	u := v.snapshot()
	a.ClientStatus, a.ClientDescription, a.TaskStates = u.ClientStatus, u.ClientDescription, u.TaskStates
	if u.DeploymentStatus != nil {
		// Health is the client's; Canary is the servers' (the scheduler
		// sets it, a promotion clears it), so it comes from their newest
		// version: services pick canary_tags by it.
		ds := *u.DeploymentStatus
		ds.Canary = v.alloc.DeploymentStatus != nil && v.alloc.DeploymentStatus.Canary
		a.DeploymentStatus = &ds
	}
	return a
}

// IsTerminal reports whether the alloc's client status is terminal and all
// its tasks are dead: its directory may be garbage collected.
func (ar *AllocRunner) IsTerminal() bool {
	select {
	case <-ar.doneCh:
	default:
		return false
	}
	return structs.ClientTerminalStatus(ar.view().status)
}

// TaskStats samples every running task's usage, keyed by task name.
func (ar *AllocRunner) TaskStats() map[string]*drivers.TaskResourceUsage {
	ts := ar.view().tasks
	names := append([]string(nil), ts.order...)
	sort.Strings(names)
	out := map[string]*drivers.TaskResourceUsage{}
	for _, n := range names {
		if u, err := ts.runners[n].Stats(); err == nil {
			out[n] = u
		}
	}
	return out
}

// TaskState returns one task's state, or nil.
func (ar *AllocRunner) TaskState(task string) *structs.TaskState {
	tr := ar.view().tasks.runners[task]
	if tr == nil {
		return nil
	}
	return tr.TaskState()
}
