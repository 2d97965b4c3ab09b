package allocrunner

import (
	"github.com/drover-sched/drover/client/taskrunner"
	"github.com/drover-sched/drover/structs"
)

// taskSet is the alloc's task runners. Run builds it once, before its loop
// starts, and nothing changes it after: the loop and readers share it.
type taskSet struct {
	runners map[string]*taskrunner.TaskRunner
	defs    map[string]*structs.Task
	order   []string // the job's task order
}

// inOrder returns the runners in the job's task order.
func (ts *taskSet) inOrder() []*taskrunner.TaskRunner {
	out := make([]*taskrunner.TaskRunner, 0, len(ts.order))
	for _, name := range ts.order {
		out = append(out, ts.runners[name])
	}
	return out
}

// view is what the loop publishes for readers on other goroutines: a
// copy of the fields they need, never changed once published. The task
// runners' own states are read live, as each task runner guards its own.
type view struct {
	alloc        *structs.Allocation // the server's version; shared, never mutated
	status, desc string              // reported last
	health       *structs.AllocDeploymentStatus
	netStatus    *structs.AllocNetworkStatus // set once, never mutated
	killing      bool
	tasks        *taskSet
}

// view returns the latest published view.
func (ar *AllocRunner) view() *view { return ar.published.Load() }

// publish makes the loop's current state the view readers see. Only the
// loop calls it (and New, before the loop exists).
func (ar *AllocRunner) publish() {
	st := &ar.st
	v := &view{alloc: st.alloc, status: st.status, desc: st.desc, killing: st.killing, tasks: st.tasks, netStatus: st.netStatus}
	if st.health != nil {
		h := *st.health
		v.health = &h
	}
	ar.published.Store(v)
}

// snapshot builds the client-side view of the alloc: the status derived
// from the tasks' current states, with the status reported last as the
// one it moves on from.
func (v *view) snapshot() *structs.Allocation {
	states := make(map[string]*structs.TaskState, len(v.tasks.runners))
	for name, tr := range v.tasks.runners {
		states[name] = tr.TaskState()
	}
	status, desc := v.status, v.desc
	if len(states) > 0 {
		prev := v.status
		if v.alloc.ClientStatus == structs.AllocClientStatusRunning && !structs.ClientTerminalStatus(prev) {
			// The servers already have it running (perhaps from a report
			// of an earlier client process): never report pending again.
			prev = structs.AllocClientStatusRunning
		}
		status, desc = structs.ClientStatusFromTasks(states, prev)
	}
	var health *structs.AllocDeploymentStatus
	if v.health != nil {
		h := *v.health
		health = &h
	}
	return &structs.Allocation{
		ID: v.alloc.ID, NodeID: v.alloc.NodeID, ClientStatus: status, ClientDescription: desc,
		TaskStates: states, DeploymentStatus: health, NetworkStatus: v.netStatus, AllocModifyIndex: v.alloc.AllocModifyIndex,
	}
}
