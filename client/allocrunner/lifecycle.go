package allocrunner

import (
	"github.com/drover-sched/drover/client/taskrunner"
	"github.com/drover-sched/drover/structs"
)

// The order of an alloc's tasks follows their lifecycle blocks (see
// structs.TaskLifecycleHookPrestart). Each phase has a start gate that
// its task runners wait on; the alloc runner opens the gates one after
// another as the tasks' states allow:
//
//	prestart   when the servers want the alloc to run (the alloc's gate)
//	main       when every prestart task that is not a sidecar has completed
//	           successfully and every prestart sidecar is running
//	poststart  when every main task has started
//	poststop   when every other task is dead, however it died
//
// When no task is left alive but sidecars (and poststop tasks), the
// sidecars are stopped: they exist to serve the others. A poststart task
// that is not a sidecar thus runs to completion even after the main tasks
// are done, as in Nomad. A gate never closes again, so a main task
// restarting later does not hold back the poststart tasks, and a failed
// prestart task leaves the main gate shut while the failure stops the
// alloc.
//
// Killing the alloc follows Nomad's stop order: every task but the
// sidecars and the poststop tasks is killed first; the sidecars are
// stopped once those are dead (a proxy or log shipper keeps serving a main
// task while it shuts down); the poststop tasks then run, as cleanup. Only
// an alloc that never got to run (its gate still shut) has all its tasks
// killed at once, poststop ones included.

// phase is when a task may start.
type phase int

const (
	phasePrestart phase = iota
	phaseMain
	phasePoststart
	phasePoststop
	numPhases
)

func phaseOf(t *structs.Task) phase {
	switch t.LifecycleHook() {
	case structs.TaskLifecycleHookPrestart:
		return phasePrestart
	case structs.TaskLifecycleHookPoststart:
		return phasePoststart
	case structs.TaskLifecycleHookPoststop:
		return phasePoststop
	}
	return phaseMain
}

// lifecycle holds the phase gates. The loop owns it (loop.go); the task
// runners only wait on the gates.
type lifecycle struct {
	gates           [numPhases]chan struct{}
	opened          [numPhases]bool
	sidecarsStopped bool
}

func newLifecycle() *lifecycle {
	l := &lifecycle{}
	for i := range l.gates {
		l.gates[i] = make(chan struct{})
	}
	return l
}

func (l *lifecycle) gate(p phase) <-chan struct{} { return l.gates[p] }

func (l *lifecycle) open(p phase) {
	if !l.opened[p] {
		l.opened[p] = true
		close(l.gates[p])
	}
}

// advanceLifecycle opens the gates whose conditions now hold and returns
// the tasks to stop because the main tasks are done. The loop calls it.
func (ar *AllocRunner) advanceLifecycle() []*taskrunner.TaskRunner {
	l, ts := ar.st.lifecycle, ar.st.tasks
	if !ar.st.gateOpen {
		return nil
	}
	l.open(phasePrestart)
	prestartDone, mainStarted, othersDead := true, true, true
	// onlySidecarsLeft: every task that is neither a sidecar nor a
	// poststop task is dead.
	onlySidecarsLeft, sidecars := true, 0
	for _, name := range ts.order {
		t, s := ts.defs[name], ts.runners[name].TaskState()
		dead := s.State == structs.TaskStateDead
		switch phaseOf(t) {
		case phasePrestart:
			if t.IsSidecar() {
				prestartDone = prestartDone && s.State == structs.TaskStateRunning
			} else {
				prestartDone = prestartDone && dead && !s.Failed
			}
		case phaseMain:
			mainStarted = mainStarted && hasStarted(s)
		}
		if phaseOf(t) != phasePoststop {
			othersDead = othersDead && dead
		}
		switch {
		case t.IsSidecar():
			sidecars++
		case phaseOf(t) != phasePoststop:
			onlySidecarsLeft = onlySidecarsLeft && dead
		}
	}
	if prestartDone {
		l.open(phaseMain)
	}
	if l.opened[phaseMain] && mainStarted {
		l.open(phasePoststart)
	}
	if othersDead {
		l.open(phasePoststop)
	}
	if sidecars == 0 || !onlySidecarsLeft || l.sidecarsStopped {
		return nil
	}
	l.sidecarsStopped = true
	var stop []*taskrunner.TaskRunner
	for _, name := range ts.order {
		if ts.defs[name].IsSidecar() {
			stop = append(stop, ts.runners[name])
		}
	}
	return stop
}

// killTargets are the runners a kill of the alloc stops at once: all but
// the sidecars (stopped by advanceLifecycle once the others are dead) and
// the poststop tasks, unless the alloc never got to run. The loop calls
// it.
func (ar *AllocRunner) killTargets() []*taskrunner.TaskRunner {
	ran, ts := ar.st.gateOpen, ar.st.tasks
	out := make([]*taskrunner.TaskRunner, 0, len(ts.order))
	for _, name := range ts.order {
		t := ts.defs[name]
		if ran && (t.IsSidecar() || phaseOf(t) == phasePoststop) {
			continue
		}
		out = append(out, ts.runners[name])
	}
	return out
}

// countsForHealth reports whether a task's running state counts for
// deployment health: main tasks and sidecars must be running; tasks that
// run to completion need only not fail.
func countsForHealth(t *structs.Task) bool { return !t.IsEphemeral() }

// hasStarted reports whether a task has run at all: it is running, or it
// recorded a start (a clock may start at the zero time, so the event
// counts as well as StartedAt).
func hasStarted(s *structs.TaskState) bool {
	if s.State == structs.TaskStateRunning || !s.StartedAt.IsZero() {
		return true
	}
	for _, e := range s.Events {
		if e.Type == structs.TaskStarted {
			return true
		}
	}
	return false
}
