package nomad

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/nomad/fsm"
	"github.com/drover-sched/drover/structs"
)

// reportBased is a's client reporting status with the report based on the
// alloc version basis (its AllocModifyIndex; 0 is a client that sends no
// basis).
func reportBased(s *Server, a *structs.Allocation, status string, basis uint64) error {
	n, err := s.State().NodeByID(nil, a.NodeID)
	if err != nil || n == nil {
		return fmt.Errorf("node %s of alloc %s: %v", a.NodeID, a.ID, err)
	}
	var resp structs.GenericResponse
	return s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{NodeID: n.ID, SecretID: n.SecretID,
		Alloc: []*structs.Allocation{{ID: a.ID, NodeID: a.NodeID, ClientStatus: status, AllocModifyIndex: basis,
			TaskStates: map[string]*structs.TaskState{"t": {State: structs.TaskStateRunning}}}}}, &resp)
}

func allocNow(t *testing.T, s *Server, id string) *structs.Allocation {
	t.Helper()
	a, err := s.State().AllocByID(nil, id)
	if err != nil || a == nil {
		t.Fatalf("alloc %s: %v", id, err)
	}
	return a
}

func reconnectEvals(t *testing.T, s *Server, jobID string) int {
	t.Helper()
	evals, err := s.State().EvalsByJob(nil, structs.DefaultNamespace, jobID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evals {
		if e.TriggeredBy == structs.EvalTriggerReconnect {
			n++
		}
	}
	return n
}

// A report based on a version of an alloc older than the servers' latest
// change to it does not undo that change (DESIGN promise 3): not the
// unknown mark of a disconnect, not a reconnect decision's stop. A report
// based on the current version is taken, and so are a terminal report and
// a report without a basis (an older client), whatever their basis.
func TestAllocReportOlderThanTheServersChangeIsIgnored(t *testing.T) {
	s, clock := startFakeClockServer(t)
	n1, n2 := itNode("n1"), itNode("n2")
	registerNode(t, s, n1)
	registerNode(t, s, n2)
	job := itJob("web", 1)
	job.TaskGroups[0].Disconnect = &structs.DisconnectStrategy{LostAfter: time.Hour, Reconcile: structs.ReconcileKeepOriginal}
	orig := placeOne(t, s, job)
	placed := orig.AllocModifyIndex // the version the client runs
	away, other := n1, n2
	if orig.NodeID == n2.ID {
		away, other = n2, n1
	}

	expireNode(t, s, clock, away.ID, other)
	var repl *structs.Allocation
	WaitFor(t, 10*time.Second, func() (bool, string) {
		a := allocNow(t, s, orig.ID)
		for _, x := range desiredRunning(jobAllocs(t, s, "web")) {
			if x.ID != orig.ID {
				repl = x
			}
		}
		return a.ClientStatus == structs.AllocClientStatusUnknown && repl != nil, "orig " + a.ClientStatus
	})
	if err := reportBased(s, repl, structs.AllocClientStatusRunning, repl.AllocModifyIndex); err != nil {
		t.Fatal(err)
	}
	heartbeatNode(t, s, away)
	WaitFor(t, 10*time.Second, func() (bool, string) { return allEvalsDone(s, "web") })

	// The client's report made before it learnt of the unknown mark is
	// ignored: the alloc stays unknown, and nothing is reconnected on it.
	marked := allocNow(t, s, orig.ID)
	if marked.AllocModifyIndex <= placed {
		t.Fatalf("the unknown mark did not move AllocModifyIndex (%d, placed at %d)", marked.AllocModifyIndex, placed)
	}
	before := reconnectEvals(t, s, "web")
	if err := reportBased(s, orig, structs.AllocClientStatusRunning, placed); err != nil {
		t.Fatalf("a stale report is ignored, not refused: %v", err)
	}
	if a := allocNow(t, s, orig.ID); a.ClientStatus != structs.AllocClientStatusUnknown || a.ModifyIndex != marked.ModifyIndex {
		t.Fatalf("a report based on index %d undid the unknown mark of index %d: client status %s, modify index %d -> %d",
			placed, marked.AllocModifyIndex, a.ClientStatus, marked.ModifyIndex, a.ModifyIndex)
	}
	if n := reconnectEvals(t, s, "web"); n != before {
		t.Fatalf("the ignored report created %d reconnect evals", n-before)
	}

	// Based on the marked version, the same report is the reconnect.
	if err := reportBased(s, orig, structs.AllocClientStatusRunning, marked.AllocModifyIndex); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		live := desiredRunning(jobAllocs(t, s, "web"))
		return len(live) == 1 && live[0].ID == orig.ID, fmt.Sprintf("%d live allocs", len(live))
	})
	WaitFor(t, 10*time.Second, func() (bool, string) { return allEvalsDone(s, "web") })

	// The reconnect decision stopped the replacement: its client's report
	// from before the stop is ignored ...
	stopped := allocNow(t, s, repl.ID)
	if stopped.DesiredStatus != structs.AllocDesiredStatusStop || stopped.AllocModifyIndex <= repl.AllocModifyIndex {
		t.Fatalf("replacement after the reconnect: desired %s, version %d", stopped.DesiredStatus, stopped.AllocModifyIndex)
	}
	if err := reportBased(s, repl, structs.AllocClientStatusRunning, repl.AllocModifyIndex); err != nil {
		t.Fatal(err)
	}
	if a := allocNow(t, s, repl.ID); a.ModifyIndex != stopped.ModifyIndex {
		t.Fatalf("a report from before the stop was applied (modify index %d -> %d)", stopped.ModifyIndex, a.ModifyIndex)
	}
	// ... but its report that the work ended is taken whatever its basis.
	if err := reportBased(s, repl, structs.AllocClientStatusComplete, repl.AllocModifyIndex); err != nil {
		t.Fatal(err)
	}
	if a := allocNow(t, s, repl.ID); a.ClientStatus != structs.AllocClientStatusComplete {
		t.Fatalf("a terminal report was not taken: %s", a.ClientStatus)
	}

	// A client that sends no basis is taken as before.
	kept := allocNow(t, s, orig.ID)
	if err := reportBased(s, orig, structs.AllocClientStatusRunning, 0); err != nil {
		t.Fatal(err)
	}
	if a := allocNow(t, s, orig.ID); a.ModifyIndex == kept.ModifyIndex {
		t.Fatal("a report without a basis was ignored")
	}
}

// The FSM makes the same check when the entry applies: the endpoint read
// the alloc before a server change that raft ordered first (here a stop),
// so an entry holding a report based on the older version leaves the
// alloc as the stop left it, while the rest of the entry applies.
func TestFSMIgnoresAReportOlderThanTheAllocsVersion(t *testing.T) {
	// a1 placed at 3 on n1 and reported running at 4; stopped at 5.
	l, job := atomicSetupLog(t)
	l.add(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocsStopped: []*structs.Allocation{{ID: "a1", NodeID: "n1", DesiredStatus: structs.AllocDesiredStatusStop, DesiredDescription: "stopped"}},
		Job:           job, UpdatedAt: 5})
	// a2 placed at 6.
	l.add(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocsUpdated: []*structs.Allocation{fsmTestAlloc("a2", "n1", job, "e1")}, Job: job, UpdatedAt: 6})
	report := func(id, status string, basis uint64) *structs.Allocation {
		return &structs.Allocation{ID: id, ClientStatus: status, AllocModifyIndex: basis,
			TaskStates: map[string]*structs.TaskState{"t": {State: structs.TaskStateRunning}}}
	}
	cases := []struct {
		name       string
		a1         *structs.Allocation
		wantA1     string
		a1Modified bool
	}{
		{"a report based on the version before the stop is ignored", report("a1", structs.AllocClientStatusRunning, 3), structs.AllocClientStatusRunning, false},
		{"a report based on the stopped version is taken", report("a1", structs.AllocClientStatusRunning, 5), structs.AllocClientStatusRunning, true},
		{"a report without a basis is taken", report("a1", structs.AllocClientStatusRunning, 0), structs.AllocClientStatusRunning, true},
		{"a terminal report is taken whatever its basis", report("a1", structs.AllocClientStatusComplete, 3), structs.AllocClientStatusComplete, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := fsm.New(hclog.NewNullLogger(), nil)
			if err != nil {
				t.Fatal(err)
			}
			l.applyTo(t, f)
			st := f.State()
			a1Before, _ := st.AllocByID(nil, "a1")
			entry := &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{tc.a1, report("a2", structs.AllocClientStatusRunning, 6)}, UpdatedAt: 100}
			if resp := f.Apply(entryAt(t, 10, structs.AllocClientUpdateRequestType, entry)); resp != nil {
				t.Fatalf("entry failed: %v", resp)
			}
			a1, _ := st.AllocByID(nil, "a1")
			if a1.ClientStatus != tc.wantA1 || (a1.ModifyIndex == 10) != tc.a1Modified {
				t.Fatalf("a1: client status %s, modify index %d -> %d; want %s, changed %v",
					a1.ClientStatus, a1Before.ModifyIndex, a1.ModifyIndex, tc.wantA1, tc.a1Modified)
			}
			if a1.DesiredStatus != structs.AllocDesiredStatusStop {
				t.Fatalf("a1 desired %s", a1.DesiredStatus)
			}
			if a2, _ := st.AllocByID(nil, "a2"); a2.ClientStatus != structs.AllocClientStatusRunning || a2.ModifyIndex != 10 {
				t.Fatalf("a2, reported on its current version, was not updated: %s at %d", a2.ClientStatus, a2.ModifyIndex)
			}
		})
	}
}
