package allocrunner

import (
	"errors"
	"fmt"

	"github.com/drover-sched/drover/client/taskrunner"
	"github.com/drover-sched/drover/structs"
)

// runState is everything about the alloc that changes while it runs. Only
// Run's goroutine (the loop) reads or writes it; other goroutines send it
// commands (do) or read the view it publishes (view.go).
type runState struct {
	alloc        *structs.Allocation // the server's latest version
	status, desc string              // the client status reported last
	tasks        *taskSet            // set once, before the loop starts
	lifecycle    *lifecycle          // the phase gates (lifecycle.go)
	gateOpen     bool                // the servers want the alloc to run
	killing      bool
	killReason   string // the first kill's, given to the sidecars it stops last
	shuttingDown bool

	// Allocation health (health.go).
	health        *structs.AllocDeploymentStatus
	healthWatched bool         // healthFor is set: a verdict was wanted once
	healthFor     string       // the deployment watched or judged last ("" for a migration)
	watch         *healthWatch // nil when no verdict is pending

	tasksDone bool // every task runner has returned: no more reports
	destroyed bool

	// netDown: the alloc's network was torn down (network.go).
	netDown bool
	// netStatus is the alloc's address in its own network namespace,
	// reported with its status (nil in host mode).
	netStatus *structs.AllocNetworkStatus
}

// command is a caller's request, run on the loop's goroutine; done is
// closed once it has run and its effects are published.
type command struct {
	run  func()
	done chan struct{}
}

// do has the loop run f and waits for it. It reports false, without
// running f, when Run has returned (after Shutdown or Destroy). f runs on
// the loop and must not call do itself.
func (ar *AllocRunner) do(f func()) bool {
	c := command{run: f, done: make(chan struct{})}
	select {
	case ar.cmds <- c:
	case <-ar.exited:
		return false
	}
	<-c.done
	return true
}

func (ar *AllocRunner) serve(c command) {
	c.run()
	ar.publish()
	close(c.done)
}

// wake tells the loop that a task's state may have changed. The task
// runners call it from their goroutines, the loop from its own; wake-ups
// that come while one is pending are one.
func (ar *AllocRunner) wake() {
	select {
	case ar.notify <- struct{}{}:
	default:
	}
}

// Run builds the alloc dir, runs the tasks, and reports status changes
// until every task runner has returned; it then closes Done. It goes on
// taking commands (a newer alloc version, a kill) until Shutdown or
// Destroy, and returns then.
func (ar *AllocRunner) Run() {
	defer close(ar.exited)
	if allDone := ar.start(); allDone != nil {
		ar.runTasks(allDone)
	}
	close(ar.doneCh)
	for !ar.st.shuttingDown && !ar.st.destroyed {
		ar.serve(<-ar.cmds)
	}
}

// start builds the alloc dir and starts a task runner per task. It
// returns a channel closed when all of them have returned, or nil if the
// alloc failed before any task could run.
func (ar *AllocRunner) start() <-chan struct{} {
	alloc := ar.cfg.Alloc
	tg := alloc.LookupTaskGroup()
	if alloc.Job == nil || tg == nil {
		ar.fail(fmt.Sprintf("alloc has no task group %q in its job", alloc.TaskGroup))
		return nil
	}
	names := make([]string, 0, len(tg.Tasks))
	for _, t := range tg.Tasks {
		names = append(names, t.Name)
	}
	if err := ar.dir.Build(names); err != nil {
		ar.fail(err.Error())
		return nil
	}
	if ar.cfg.StateDB != nil && !ar.cfg.Restore {
		if err := ar.cfg.StateDB.PutAlloc(alloc); err != nil {
			ar.logger.Error("failed to persist alloc", "error", err)
		}
	}
	// A restored alloc whose network is gone still gets its runners, to
	// re-attach to its tasks and stop them.
	net, netErr := ar.setupNetwork(alloc, tg)
	if netErr != nil && !ar.cfg.Restore {
		ar.fail(netErr.Error())
		return nil
	}
	ts := &taskSet{runners: map[string]*taskrunner.TaskRunner{}, defs: map[string]*structs.Task{}}
	for _, task := range tg.Tasks {
		drv := ar.cfg.Driver(task.Driver)
		if drv == nil {
			drv = missingDriver(task.Driver)
		}
		ts.runners[task.Name] = taskrunner.New(taskrunner.Config{
			Alloc: alloc, Task: task, Node: ar.cfg.Node, Region: ar.cfg.Region, AllocDir: ar.dir,
			Driver: drv, StateDB: ar.cfg.StateDB, Clock: ar.cfg.Clock, Logger: ar.cfg.Logger,
			HostEnv: ar.cfg.HostEnv, Users: ar.cfg.Users, MaxKillTimeout: ar.cfg.MaxKillTimeout,
			StartGate: ar.st.lifecycle.gate(phaseOf(task)),
			OnUpdate:  ar.wake, Restore: ar.cfg.Restore,
			Artifacts: ar.cfg.Artifacts, Services: ar.cfg.Services,
			Metrics: ar.cfg.Metrics, Network: net,
		})
		ts.defs[task.Name] = task
		ts.order = append(ts.order, task.Name)
	}
	ar.st.tasks = ts
	// Open the first phases now. Only a group with nothing but sidecars
	// (and poststop tasks) has sidecars to stop already: nothing is left
	// for them to serve.
	idleSidecars := ar.advanceLifecycle()
	ar.publish()
	runners := ts.inOrder()
	for _, tr := range runners {
		go tr.Run()
	}
	for _, tr := range idleSidecars {
		tr.Kill("Main tasks have completed")
	}
	if netErr != nil {
		ar.kill(netErr.Error())
	}
	if ar.st.gateOpen {
		// A restored runner's checks wait for Confirm, as its tasks'
		// restarts do: check_restart must not act for an alloc the
		// servers may want stopped.
		ar.checks.Load().Start()
	}
	ar.maybeWatchHealth()
	allDone := make(chan struct{})
	go func() {
		for _, tr := range runners {
			<-tr.Done()
		}
		close(allDone)
	}()
	return allDone
}

// runTasks is the loop while tasks run: it takes commands, task changes
// and the health timers one at a time, until every task runner has
// returned.
func (ar *AllocRunner) runTasks(allDone <-chan struct{}) {
	for {
		select {
		case c := <-ar.cmds:
			ar.serve(c)
			continue
		case <-ar.notify:
			ar.handleTaskChange()
		case <-ar.checkChanged:
			ar.checkHealth()
		case <-ar.st.watch.readyC():
			ar.checkHealth()
		case <-ar.st.watch.deadlineC():
			ar.healthDeadlinePassed()
		case <-allDone:
			ar.checks.Load().Stop()
			if !ar.st.shuttingDown {
				ar.handleTaskChange()
				_ = ar.teardownNetwork()
			} // else the tasks are left as they are for the next client
			ar.st.tasksDone = true
			ar.st.watch = nil
			ar.publish()
			return
		}
		ar.publish()
	}
}

// handleTaskChange reacts to task state changes: a failed task or a dead
// leader stops the others; the lifecycle gates open as their phases'
// conditions hold, and sidecars stop once the main tasks are dead; the
// deployment health is judged again; any change is reported.
func (ar *AllocRunner) handleTaskChange() {
	st := &ar.st
	sidecars := ar.advanceLifecycle()
	var failed, leaderDead bool
	for _, tr := range st.tasks.runners {
		s := tr.TaskState()
		if s.State == structs.TaskStateDead {
			failed = failed || s.Failed
			leaderDead = leaderDead || tr.IsLeader()
		}
	}
	stopOthers := (failed || leaderDead) && !st.killing
	sidecarReason := "Main tasks have completed"
	if st.killing {
		sidecarReason = st.killReason
	}
	for _, tr := range sidecars {
		tr.Kill(sidecarReason)
	}
	if stopOthers {
		reason := "Sibling Task Failed"
		if !failed {
			reason = "Leader Task Dead"
		}
		ar.kill(reason)
	}
	ar.checkHealth()
	ar.report()
}

// report derives the client status from the tasks and hands it on.
func (ar *AllocRunner) report() {
	ar.publish()
	u := ar.view().snapshot()
	ar.st.status, ar.st.desc = u.ClientStatus, u.ClientDescription
	ar.publish()
	ar.cfg.OnUpdate(u)
}

// fail reports the alloc failed before any task could run.
func (ar *AllocRunner) fail(desc string) {
	ar.logger.Error("alloc failed", "reason", desc)
	ar.st.status, ar.st.desc = structs.AllocClientStatusFailed, desc
	ar.publish()
	ar.cfg.OnUpdate(ar.view().snapshot())
}

// update is Update on the loop.
func (ar *AllocRunner) update(a *structs.Allocation) {
	st := &ar.st
	if a.AllocModifyIndex < st.alloc.AllocModifyIndex {
		return
	}
	newer := a.AllocModifyIndex > st.alloc.AllocModifyIndex
	st.alloc = a
	// Report again, based on this version, if anything was reported
	// before: when the servers' view of the client status differs (they
	// marked it unknown during a disconnect, or missed a report), and when
	// the servers changed the alloc since, because they ignore a report
	// based on an older version than their latest change (DESIGN promise
	// 3), and one may have been in flight.
	if (a.ClientStatus != st.status || newer) && st.status != "" {
		ar.wake()
	}
	if ar.cfg.StateDB != nil {
		if err := ar.cfg.StateDB.PutAlloc(a); err != nil {
			ar.logger.Error("failed to persist alloc", "error", err)
		}
	}
	for _, tr := range st.tasks.inOrder() {
		tr.UpdateAlloc(a)
	}
	if a.ServerTerminalStatus() {
		ar.kill("alloc desired status is " + a.DesiredStatus)
		return
	}
	ar.confirm()
	ar.updateChecks(a)
	ar.maybeWatchHealth()
}

// confirm is Confirm on the loop: it opens the alloc's start gate unless
// the alloc is being stopped; the loop is woken to open the first phases
// (lifecycle.go).
func (ar *AllocRunner) confirm() {
	st := &ar.st
	if st.alloc.ServerTerminalStatus() || st.killing || st.gateOpen {
		return
	}
	st.gateOpen = true
	if st.tasks.runners != nil && !st.tasksDone {
		ar.checks.Load().Start()
	}
	ar.wake()
}

// kill is Kill on the loop. The first kill's reason is kept for the
// sidecars, which are stopped last.
func (ar *AllocRunner) kill(reason string) {
	st := &ar.st
	if !st.killing {
		st.killing, st.killReason = true, reason
		// A check failing while the tasks stop must not restart them.
		ar.checks.Load().Stop()
	}
	for _, tr := range ar.killTargets() {
		tr.Kill(reason)
	}
}

// shutdown is Shutdown on the loop: the task runners return and leave
// their tasks running, and the loop returns once they have.
func (ar *AllocRunner) shutdown() {
	ar.st.shuttingDown = true
	ar.checks.Load().Stop()
	for _, tr := range ar.st.tasks.inOrder() {
		tr.Shutdown()
	}
}

// destroy is Destroy on the loop, once every task runner has returned;
// the loop returns after it.
func (ar *AllocRunner) destroy() error {
	if ar.st.destroyed {
		return nil
	}
	ar.st.destroyed = true
	return ar.removeFiles()
}

// removeFiles removes the alloc's directory and local state.
func (ar *AllocRunner) removeFiles() error {
	var errs []error
	if err := ar.teardownNetwork(); err != nil {
		errs = append(errs, err)
	}
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
