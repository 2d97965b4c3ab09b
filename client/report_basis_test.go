package client

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// A report the client held while the servers refused it (the node was not
// ready) is based on the alloc version it ran then. If the servers changed
// the alloc meanwhile, they ignore that report (a report older than an
// assignment never undoes it), so the client, having read the newer
// version, reports again on it, even though its status did not change:
// the servers end up with the client's word, based on their latest
// version.
func TestHeldReportIsRenewedOnANewerVersion(t *testing.T) {
	e := newEnv(t, time.Hour) // no heartbeat while the test steps the clock
	c := e.start(nil)
	e.fs.SetNotReady(true)
	a := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeService, mockTask(map[string]any{}))))
	e.waitFor("an update to be refused", func() bool { return e.fs.Calls("Node.UpdateAlloc") >= 1 })
	e.waitFor("the task to run locally", func() bool {
		ar := c.runner(a.ID)
		return ar != nil && ar.TaskState("web") != nil && ar.TaskState("web").State == structs.TaskStateRunning
	})

	// The servers change the alloc without changing its client status.
	v2 := e.fs.Alloc(a.ID)
	v2.ClientStatus = structs.AllocClientStatusRunning
	v2.DesiredDescription = "changed by the servers"
	v2 = e.fs.UpsertAlloc(v2)
	e.waitFor("the client to read the newer version", func() bool {
		ar := c.runner(a.ID)
		return ar != nil && ar.Alloc().AllocModifyIndex == v2.AllocModifyIndex
	})

	e.waitFor("the heartbeat", func() bool {
		if e.fs.Calls("Node.UpdateStatus") == 0 {
			e.clk.Advance(time.Minute)
		}
		return e.fs.Calls("Node.UpdateStatus") >= 1
	})
	e.waitFor("the client's report to be taken", func() bool {
		if ts := e.fs.Alloc(a.ID).TaskStates["web"]; ts != nil && ts.State == structs.TaskStateRunning {
			return true
		}
		e.clk.Advance(time.Second) // the updater's interval
		return false
	})
	for _, u := range e.fs.Updates() {
		if u.ID == a.ID && u.AllocModifyIndex != a.AllocModifyIndex && u.AllocModifyIndex != v2.AllocModifyIndex {
			t.Fatalf("a report based on %d, which the client never had", u.AllocModifyIndex)
		}
	}
}
