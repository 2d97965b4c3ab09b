package allocrunner

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/client/state"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// Every report names the alloc version it is based on, and a newer
// version from the servers is answered with a report based on it even
// when nothing changed locally: the servers ignore a report based on an
// older version than their latest change, and one may have been in
// flight, so without this the client's word could be lost until its
// tasks next change.
func TestReportsNameTheirBasisAndFollowANewerVersion(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	defer drv.Shutdown()
	alloc := mockAlloc(structs.JobTypeService, &structs.Task{Name: "web", Config: map[string]any{}})
	ar, rec := newRunner(t, alloc, drv, clk, state.NewMemDB(), t.TempDir(), false)
	go ar.Run()
	defer ar.Shutdown()
	testutil.WaitFor(t, "running", func() bool { return rec.last().ClientStatus == structs.AllocClientStatusRunning })
	if got := rec.last().AllocModifyIndex; got != alloc.AllocModifyIndex {
		t.Fatalf("report based on %d, want the version run (%d)", got, alloc.AllocModifyIndex)
	}

	// A server change that leaves the client status alone (here the
	// servers had it running, as reported).
	newer := alloc.Copy()
	newer.ClientStatus = structs.AllocClientStatusRunning
	newer.AllocModifyIndex = 20
	ar.Update(newer)
	testutil.WaitFor(t, "a report based on version 20", func() bool { return rec.last().AllocModifyIndex == 20 })
	if got := rec.last().ClientStatus; got != structs.AllocClientStatusRunning {
		t.Fatalf("re-report says %s", got)
	}

	// An older version changes nothing: the basis never goes back.
	ar.Update(alloc)
	basis := ar.Alloc().AllocModifyIndex
	if basis != 20 {
		t.Fatalf("an older version moved the basis back to %d", basis)
	}
}
