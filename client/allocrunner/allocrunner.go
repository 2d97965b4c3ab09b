package allocrunner

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/client/artifact"
	"github.com/drover-sched/drover/client/clock"
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/state"
	"github.com/drover-sched/drover/client/taskrunner"
	"github.com/drover-sched/drover/structs"
)

// Config is what an AllocRunner needs.
type Config struct {
	Alloc        *structs.Allocation
	Node         *structs.Node
	Region       string
	AllocDirBase string
	// Driver returns the named driver, or nil if it is not loaded.
	Driver         func(name string) drivers.Driver
	StateDB        state.DB
	Clock          clock.Clock
	Logger         hclog.Logger
	HostEnv        map[string]string
	MaxKillTimeout time.Duration
	// OnUpdate receives the alloc's client-side fields after each change,
	// always from the runner's goroutine.
	OnUpdate func(update *structs.Allocation)
	// Restore re-attaches to the tasks of a restarted client; the start gate
	// stays shut until Confirm.
	Restore bool
	// Artifacts fetches the tasks' artifacts; nil is a zero Fetcher.
	Artifacts *artifact.Fetcher
}

// AllocRunner runs one allocation. See the package doc.
type AllocRunner struct {
	cfg    Config
	logger hclog.Logger
	clock  clock.Clock
	dir    *allocdir.AllocDir

	mu           sync.Mutex
	alloc        *structs.Allocation
	status, desc string
	tasks        map[string]*taskrunner.TaskRunner
	defs         map[string]*structs.Task
	order        []string
	lifecycle    *lifecycle // see lifecycle.go
	killing      bool
	killReason   string // the first kill's, given to the sidecars it stops last
	shuttingDown bool

	// Deployment health (see health.go).
	health       *structs.AllocDeploymentStatus
	healthFor    string
	healthCancel chan struct{}
	healthStop   chan struct{} // closed when Run ends; nil before Run
	healthNotify chan struct{}
	healthWG     sync.WaitGroup
	healthEnded  bool
	destroyed    bool

	gate      chan struct{}
	gateOnce  sync.Once
	notify    chan struct{}
	shutdown  chan struct{}
	shutOnce  sync.Once
	doneCh    chan struct{}
	destroyMu sync.Mutex
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
		cfg:          cfg,
		logger:       cfg.Logger.Named("alloc_runner").With("alloc_id", cfg.Alloc.ID),
		clock:        clock.OrReal(cfg.Clock),
		dir:          allocdir.New(cfg.AllocDirBase, cfg.Alloc.ID),
		alloc:        cfg.Alloc,
		tasks:        map[string]*taskrunner.TaskRunner{},
		defs:         map[string]*structs.Task{},
		lifecycle:    newLifecycle(),
		gate:         make(chan struct{}),
		notify:       make(chan struct{}, 1),
		healthNotify: make(chan struct{}, 1),
		shutdown:     make(chan struct{}),
		doneCh:       make(chan struct{}),
	}
	if cfg.Restore {
		ar.status = cfg.Alloc.ClientStatus
	} else {
		ar.openGate()
	}
	return ar
}

// ID returns the alloc ID.
func (ar *AllocRunner) ID() string { return ar.cfg.Alloc.ID }

// AllocDir returns the alloc's directory layout.
func (ar *AllocRunner) AllocDir() *allocdir.AllocDir { return ar.dir }

// Done is closed when Run has returned (every task runner has).
func (ar *AllocRunner) Done() <-chan struct{} { return ar.doneCh }

// openGate lets the alloc's tasks start, phase by phase (lifecycle.go):
// Run's loop is woken to open the first phases.
func (ar *AllocRunner) openGate() {
	ar.gateOnce.Do(func() {
		close(ar.gate)
		ar.taskUpdated()
	})
}

// Alloc returns the server's version of the alloc with the client's
// current fields filled in.
func (ar *AllocRunner) Alloc() *structs.Allocation {
	ar.mu.Lock()
	a := ar.alloc.Copy()
	ar.mu.Unlock()
	u := ar.snapshot()
	a.ClientStatus, a.ClientDescription, a.TaskStates = u.ClientStatus, u.ClientDescription, u.TaskStates
	if u.DeploymentStatus != nil {
		a.DeploymentStatus = u.DeploymentStatus
	}
	return a
}

// Run builds the alloc dir, runs the tasks, and reports status changes
// until every task runner has returned.
func (ar *AllocRunner) Run() {
	defer close(ar.doneCh)
	alloc := ar.cfg.Alloc
	tg := alloc.LookupTaskGroup()
	if alloc.Job == nil || tg == nil {
		ar.fail(fmt.Sprintf("alloc has no task group %q in its job", alloc.TaskGroup))
		return
	}
	names := make([]string, 0, len(tg.Tasks))
	for _, t := range tg.Tasks {
		names = append(names, t.Name)
	}
	if err := ar.dir.Build(names); err != nil {
		ar.fail(err.Error())
		return
	}
	if ar.cfg.StateDB != nil && !ar.cfg.Restore {
		if err := ar.cfg.StateDB.PutAlloc(alloc); err != nil {
			ar.logger.Error("failed to persist alloc", "error", err)
		}
	}
	ar.mu.Lock()
	for _, task := range tg.Tasks {
		drv := ar.cfg.Driver(task.Driver)
		if drv == nil {
			drv = missingDriver(task.Driver)
		}
		ar.tasks[task.Name] = taskrunner.New(taskrunner.Config{
			Alloc: alloc, Task: task, Node: ar.cfg.Node, Region: ar.cfg.Region, AllocDir: ar.dir,
			Driver: drv, StateDB: ar.cfg.StateDB, Clock: ar.cfg.Clock, Logger: ar.cfg.Logger,
			HostEnv: ar.cfg.HostEnv, MaxKillTimeout: ar.cfg.MaxKillTimeout,
			StartGate: ar.lifecycle.gate(phaseOf(task)),
			OnUpdate:  ar.taskUpdated, Restore: ar.cfg.Restore,
			Artifacts: ar.cfg.Artifacts,
		})
		ar.defs[task.Name] = task
		ar.order = append(ar.order, task.Name)
	}
	// Open the first phases now. Only a group with nothing but sidecars
	// (and poststop tasks) has sidecars to stop already: nothing is left
	// for them to serve.
	idleSidecars := ar.advanceLifecycle()
	runners := make([]*taskrunner.TaskRunner, 0, len(ar.tasks))
	for _, name := range ar.order {
		runners = append(runners, ar.tasks[name])
	}
	killed, shutdown := ar.killing, ar.shuttingDown
	ar.mu.Unlock()
	for _, tr := range runners {
		go tr.Run()
	}
	for _, tr := range idleSidecars {
		tr.Kill("Main tasks have completed")
	}
	if killed {
		ar.killTasks("alloc stopped before it started")
	}
	if shutdown {
		// Shutdown came before the task runners existed.
		for _, tr := range runners {
			tr.Shutdown()
		}
	}
	ar.mu.Lock()
	ar.healthStop = make(chan struct{})
	ar.mu.Unlock()
	ar.maybeWatchHealth()
	defer func() {
		ar.mu.Lock()
		close(ar.healthStop)
		ar.healthEnded = true
		ar.mu.Unlock()
		ar.healthWG.Wait()
	}()
	allDone := make(chan struct{})
	go func() {
		for _, tr := range runners {
			<-tr.Done()
		}
		close(allDone)
	}()
	for {
		select {
		case <-ar.notify:
			ar.handleTaskChange()
		case <-allDone:
			select {
			case <-ar.shutdown:
				return // tasks left as they are for the next client
			default:
			}
			ar.handleTaskChange()
			return
		}
	}
}

func (ar *AllocRunner) taskUpdated() {
	select {
	case ar.notify <- struct{}{}:
	default:
	}
	select {
	case ar.healthNotify <- struct{}{}:
	default:
	}
}

// handleTaskChange reacts to task state changes: a failed task or a dead
// leader stops the others; the lifecycle gates open as their phases'
// conditions hold, and sidecars stop once the main tasks are dead; any
// change is reported.
func (ar *AllocRunner) handleTaskChange() {
	ar.mu.Lock()
	sidecars := ar.advanceLifecycle()
	var failed, leaderDead bool
	for _, tr := range ar.tasks {
		s := tr.TaskState()
		if s.State == structs.TaskStateDead {
			failed = failed || s.Failed
			leaderDead = leaderDead || tr.IsLeader()
		}
	}
	stopOthers := (failed || leaderDead) && !ar.killing
	sidecarReason := "Main tasks have completed"
	if ar.killing {
		sidecarReason = ar.killReason
	}
	ar.mu.Unlock()
	for _, tr := range sidecars {
		tr.Kill(sidecarReason)
	}
	if stopOthers {
		reason := "Sibling Task Failed"
		if !failed {
			reason = "Leader Task Dead"
		}
		ar.killTasks(reason)
	}
	ar.report()
}

// snapshot builds the client-side view of the alloc.
func (ar *AllocRunner) snapshot() *structs.Allocation {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	states := make(map[string]*structs.TaskState, len(ar.tasks))
	for name, tr := range ar.tasks {
		states[name] = tr.TaskState()
	}
	status, desc := ar.status, ar.desc
	if len(states) > 0 {
		prev := ar.status
		if ar.alloc.ClientStatus == structs.AllocClientStatusRunning && !structs.ClientTerminalStatus(prev) {
			// The servers already have it running (perhaps from a report
			// of an earlier client process): never report pending again.
			prev = structs.AllocClientStatusRunning
		}
		status, desc = clientStatus(states, prev)
	}
	var health *structs.AllocDeploymentStatus
	if ar.health != nil {
		h := *ar.health
		health = &h
	}
	return &structs.Allocation{
		ID: ar.alloc.ID, NodeID: ar.alloc.NodeID, ClientStatus: status, ClientDescription: desc,
		TaskStates: states, DeploymentStatus: health, AllocModifyIndex: ar.alloc.AllocModifyIndex,
	}
}

func (ar *AllocRunner) report() {
	u := ar.snapshot()
	ar.mu.Lock()
	ar.status, ar.desc = u.ClientStatus, u.ClientDescription
	ar.mu.Unlock()
	ar.cfg.OnUpdate(u)
}

// fail reports the alloc failed before any task could run.
func (ar *AllocRunner) fail(desc string) {
	ar.logger.Error("alloc failed", "reason", desc)
	ar.mu.Lock()
	ar.status, ar.desc = structs.AllocClientStatusFailed, desc
	ar.mu.Unlock()
	ar.cfg.OnUpdate(ar.snapshot())
}

// Update applies a newer server version of the alloc. An older version (a
// stale read) is ignored. Reports made from here on are based on this
// version (their AllocModifyIndex). Desired stop or evict stops the
// tasks; desired run confirms the alloc and opens the start gate.
func (ar *AllocRunner) Update(a *structs.Allocation) {
	ar.mu.Lock()
	if a.AllocModifyIndex < ar.alloc.AllocModifyIndex {
		ar.mu.Unlock()
		return
	}
	newer := a.AllocModifyIndex > ar.alloc.AllocModifyIndex
	ar.alloc = a
	runners := ar.runners()
	// Report again, based on this version, if anything was reported
	// before: when the servers' view of the client status differs (they
	// marked it unknown during a disconnect, or missed a report), and when
	// the servers changed the alloc since, because they ignore a report
	// based on an older version than their latest change (DESIGN promise
	// 3), and one may have been in flight.
	reportAgain := (a.ClientStatus != ar.status || newer) && ar.status != ""
	ar.mu.Unlock()
	if reportAgain {
		ar.taskUpdated()
	}
	if ar.cfg.StateDB != nil {
		if err := ar.cfg.StateDB.PutAlloc(a); err != nil {
			ar.logger.Error("failed to persist alloc", "error", err)
		}
	}
	for _, tr := range runners {
		tr.UpdateAlloc(a)
	}
	if a.ServerTerminalStatus() {
		ar.Kill("alloc desired status is " + a.DesiredStatus)
		return
	}
	ar.Confirm()
	ar.maybeWatchHealth()
}

// Confirm tells a restored runner that the servers still want the alloc to
// run (its assignment lists it, unchanged, with desired status run).
func (ar *AllocRunner) Confirm() {
	ar.mu.Lock()
	run := !ar.alloc.ServerTerminalStatus() && !ar.killing
	ar.mu.Unlock()
	if run {
		ar.openGate()
	}
}

func (ar *AllocRunner) runners() []*taskrunner.TaskRunner {
	out := make([]*taskrunner.TaskRunner, 0, len(ar.order))
	for _, name := range ar.order {
		out = append(out, ar.tasks[name])
	}
	return out
}

// Kill stops every task for good. It does not wait; use Done.
func (ar *AllocRunner) Kill(reason string) {
	ar.killTasks(reason)
}

func (ar *AllocRunner) killTasks(reason string) {
	ar.mu.Lock()
	if !ar.killing {
		ar.killing, ar.killReason = true, reason
	}
	runners := ar.killTargets()
	ar.mu.Unlock()
	for _, tr := range runners {
		tr.Kill(reason)
	}
}

// IsTerminal reports whether the alloc's client status is terminal and all
// its tasks are dead: its directory may be garbage collected.
func (ar *AllocRunner) IsTerminal() bool {
	select {
	case <-ar.doneCh:
	default:
		return false
	}
	ar.mu.Lock()
	defer ar.mu.Unlock()
	return structs.ClientTerminalStatus(ar.status)
}

// Shutdown stops the runner without stopping the tasks, and waits.
func (ar *AllocRunner) Shutdown() {
	ar.shutOnce.Do(func() { close(ar.shutdown) })
	ar.mu.Lock()
	ar.shuttingDown = true
	runners := ar.runners()
	ar.mu.Unlock()
	for _, tr := range runners {
		tr.Shutdown()
	}
	<-ar.doneCh
}

// Destroy stops the tasks, waits for them, and removes the alloc's
// directory and local state. The GC calls it.
func (ar *AllocRunner) Destroy() error {
	ar.destroyMu.Lock()
	defer ar.destroyMu.Unlock()
	ar.Kill("alloc is being garbage collected")
	<-ar.doneCh
	ar.mu.Lock()
	if ar.destroyed {
		ar.mu.Unlock()
		return nil
	}
	ar.destroyed = true
	ar.mu.Unlock()
	var errs []error
	if err := ar.dir.Destroy(); err != nil {
		errs = append(errs, err)
	}
	if ar.cfg.StateDB != nil {
		if err := ar.cfg.StateDB.DeleteAlloc(ar.ID()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// TaskStats samples every running task's usage, keyed by task name.
func (ar *AllocRunner) TaskStats() map[string]*drivers.TaskResourceUsage {
	ar.mu.Lock()
	names := append([]string(nil), ar.order...)
	tasks := ar.tasks
	ar.mu.Unlock()
	sort.Strings(names)
	out := map[string]*drivers.TaskResourceUsage{}
	for _, n := range names {
		if u, err := tasks[n].Stats(); err == nil {
			out[n] = u
		}
	}
	return out
}

// TaskState returns one task's state, or nil.
func (ar *AllocRunner) TaskState(task string) *structs.TaskState {
	ar.mu.Lock()
	tr := ar.tasks[task]
	ar.mu.Unlock()
	if tr == nil {
		return nil
	}
	return tr.TaskState()
}
