package nomad

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/nomad/fsm"
	"github.com/drover-sched/drover/structs"
)

func forceGC(t *testing.T, s *Server) {
	t.Helper()
	var resp structs.GenericResponse
	if err := s.RPC("System.GarbageCollect", &structs.GenericRequest{}, &resp); err != nil {
		t.Fatalf("System.GarbageCollect: %v", err)
	}
}

func evaluateJob(t *testing.T, s *Server, jobID string) string {
	t.Helper()
	var resp structs.JobRegisterResponse
	if err := s.RPC("Job.Evaluate", &structs.JobEvaluateRequest{JobID: jobID}, &resp); err != nil {
		t.Fatalf("Job.Evaluate: %v", err)
	}
	return resp.EvalID
}

func waitEvalDone(t *testing.T, s *Server, evalID string) {
	t.Helper()
	WaitFor(t, 10*time.Second, func() (bool, string) {
		st := evalStatus(t, s, evalID)
		return st == structs.EvalStatusComplete, "eval " + evalID + " is " + st
	})
}

func allocByID(t *testing.T, s *Server, id string) *structs.Allocation {
	t.Helper()
	a, err := s.State().AllocByID(nil, id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Finding: GC deleted a completed batch alloc while its job still ran, so
// the scheduler placed the finished work again. The completed alloc comes
// from an eval whose other alloc failed and was rescheduled, so that eval
// is terminal with only client-terminal allocs: exactly what GC used to
// take.
func TestGCKeepsACompletedBatchAllocWhileItsJobRuns(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	registerNode(t, s, itNode("n1"))
	job := itJob("report", 2)
	job.Type = structs.JobTypeBatch
	job.TaskGroups[0].ReschedulePolicy = &structs.ReschedulePolicy{Attempts: 1, Interval: time.Hour, DelayFunction: structs.DelayFunctionConstant}
	reg := registerJob(t, s, job)
	WaitFor(t, 10*time.Second, func() (bool, string) {
		n := len(desiredRunning(jobAllocs(t, s, "report")))
		return n == 2 && evalStatus(t, s, reg.EvalID) == structs.EvalStatusComplete, fmt.Sprintf("%d allocs", n)
	})
	allocs := jobAllocs(t, s, "report")
	done, failed := allocs[0], allocs[1]
	for _, a := range allocs {
		if err := reportAlloc(s, a, structs.AllocClientStatusRunning); err != nil {
			t.Fatal(err)
		}
	}
	// One fails and is replaced at once (no delay); the other completes.
	if err := reportAlloc(s, failed, structs.AllocClientStatusFailed); err != nil {
		t.Fatal(err)
	}
	var replacement string
	WaitFor(t, 10*time.Second, func() (bool, string) {
		replacement = allocByID(t, s, failed.ID).NextAllocation
		return replacement != "", "failed alloc not replaced yet"
	})
	if err := reportAlloc(s, done, structs.AllocClientStatusComplete); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		evals, _ := s.State().EvalsByJob(nil, "default", "report")
		for _, e := range evals {
			if !e.TerminalStatus() {
				return false, "eval " + e.ID + " is " + e.Status
			}
		}
		return true, ""
	})
	if j, _ := s.State().JobByID(nil, "default", "report"); j.Status != structs.JobStatusRunning {
		t.Fatalf("job status = %q, want running", j.Status)
	}

	forceGC(t, s)
	if allocByID(t, s, done.ID) == nil {
		t.Fatal("GC deleted the completed alloc of a running batch job")
	}
	// The scheduler looks again: the finished work is not placed again.
	waitEvalDone(t, s, evaluateJob(t, s, "report"))
	var ids []string
	for _, a := range jobAllocs(t, s, "report") {
		ids = append(ids, a.ID)
	}
	want := []string{done.ID, failed.ID, replacement}
	sort.Strings(ids)
	sort.Strings(want)
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("allocs after GC and a new eval = %v, want %v", ids, want)
	}

	// When the job is done, GC takes everything, the job included.
	if err := reportAlloc(s, allocByID(t, s, replacement), structs.AllocClientStatusComplete); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		j, _ := s.State().JobByID(nil, "default", "report")
		return j.Status == structs.JobStatusDead, "job is " + j.Status
	})
	forceGC(t, s)
	if n := len(jobAllocs(t, s, "report")); n != 0 {
		t.Fatalf("%d allocs left after GC of a dead batch job", n)
	}
	if j, _ := s.State().JobByID(nil, "default", "report"); j != nil {
		t.Fatal("a dead batch job with nothing left was not purged")
	}
}

// Finding: a failed alloc waiting for a delayed reschedule lost its
// reschedule history to GC.
func TestGCKeepsAFailedAllocWaitingForItsReschedule(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	registerNode(t, s, itNode("n1"))
	job := itJob("web", 1)
	job.TaskGroups[0].ReschedulePolicy = &structs.ReschedulePolicy{Unlimited: true, Delay: time.Hour, DelayFunction: structs.DelayFunctionConstant}
	reg := registerJob(t, s, job)
	var a *structs.Allocation
	WaitFor(t, 10*time.Second, func() (bool, string) {
		live := desiredRunning(jobAllocs(t, s, "web"))
		if len(live) == 1 {
			a = live[0]
		}
		return a != nil && evalStatus(t, s, reg.EvalID) == structs.EvalStatusComplete, "waiting for the alloc"
	})
	if err := reportAlloc(s, a, structs.AllocClientStatusRunning); err != nil {
		t.Fatal(err)
	}
	if err := reportAlloc(s, a, structs.AllocClientStatusFailed); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		cur := allocByID(t, s, a.ID)
		return cur.FollowupEvalID != "", "no follow-up eval on the failed alloc yet"
	})
	WaitFor(t, 10*time.Second, func() (bool, string) {
		evals, _ := s.State().EvalsByJob(nil, "default", "web")
		for _, e := range evals {
			if !e.TerminalStatus() && e.ID != allocByID(t, s, a.ID).FollowupEvalID {
				return false, "eval " + e.ID + " is " + e.Status
			}
		}
		return true, ""
	})

	forceGC(t, s)
	cur := allocByID(t, s, a.ID)
	if cur == nil {
		t.Fatal("GC deleted a failed alloc waiting for its reschedule")
	}
	if e, _ := s.State().EvalByID(nil, cur.EvalID); e == nil {
		t.Fatal("GC deleted the eval of a kept alloc")
	}

	// Stopping the job ends the wait: now it may go.
	var dresp structs.JobDeregisterResponse
	if err := s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: "web"}, &dresp); err != nil {
		t.Fatal(err)
	}
	waitEvalDone(t, s, dresp.EvalID)
	forceGC(t, s)
	if allocByID(t, s, a.ID) != nil {
		t.Fatal("the failed alloc of a stopped job was not collected")
	}
}

// Finding: GetClientAllocs answered with the highest AllocModifyIndex of
// the node's allocs, so deleting the newest one made the index go back
// and a blocked client never heard of the deletion.
func TestGCOfANodesNewestAllocMovesItsAssignmentIndexForward(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	node := itNode("n1")
	registerNode(t, s, node)
	assignment := func(minIndex uint64, wait time.Duration) *structs.NodeClientAllocsResponse {
		t.Helper()
		var resp structs.NodeClientAllocsResponse
		req := &structs.NodeSpecificRequest{NodeID: node.ID, SecretID: node.SecretID,
			QueryOptions: structs.QueryOptions{MinQueryIndex: minIndex, MaxQueryTime: wait}}
		if err := s.RPC("Node.GetClientAllocs", req, &resp); err != nil {
			t.Fatalf("Node.GetClientAllocs: %v", err)
		}
		return &resp
	}

	// "old" keeps running; "new" gets the node's newest alloc, then stops.
	for _, id := range []string{"old", "new"} {
		reg := registerJob(t, s, itJob(id, 1))
		waitEvalDone(t, s, reg.EvalID)
	}
	newest := desiredRunning(jobAllocs(t, s, "new"))[0]
	if err := reportAlloc(s, newest, structs.AllocClientStatusRunning); err != nil {
		t.Fatal(err)
	}
	var dresp structs.JobDeregisterResponse
	if err := s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: "new"}, &dresp); err != nil {
		t.Fatal(err)
	}
	waitEvalDone(t, s, dresp.EvalID)
	if err := reportAlloc(s, newest, structs.AllocClientStatusComplete); err != nil {
		t.Fatal(err)
	}
	before := assignment(0, 0)
	if before.Index != allocByID(t, s, newest.ID).AllocModifyIndex {
		t.Fatalf("assignment index %d is not the newest alloc's %d", before.Index, allocByID(t, s, newest.ID).AllocModifyIndex)
	}

	// A client blocks on its assignment; GC deletes the newest alloc.
	blocked := make(chan *structs.NodeClientAllocsResponse, 1)
	go func() { blocked <- assignment(before.Index, 5*time.Minute) }()
	forceGC(t, s)
	if allocByID(t, s, newest.ID) != nil {
		t.Fatal("GC kept the alloc of a stopped job")
	}
	select {
	case resp := <-blocked:
		// Woken by the deletion itself, not by some later change.
		deletedAt, err := s.State().NodeAllocsDeletedIndex(nil, node.ID)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Index <= before.Index || resp.Index != deletedAt {
			t.Fatalf("blocked query answered index %d, want the deletion's %d (past %d)", resp.Index, deletedAt, before.Index)
		}
		if _, ok := resp.Allocs[newest.ID]; ok || len(resp.Allocs) != 1 {
			t.Fatalf("assignment after GC = %v, want only the old job's alloc", resp.Allocs)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a blocked Node.GetClientAllocs did not wake on the deletion of the node's alloc")
	}
	if after := assignment(0, 0); after.Index <= before.Index {
		t.Fatalf("assignment index went from %d to %d across a GC", before.Index, after.Index)
	}
}

// recordingHooks remembers the order of JobStopped calls.
type recordingHooks struct {
	fsm.NoHooks
	stopped []string
}

func (h *recordingHooks) JobStopped(namespace, jobID string) {
	h.stopped = append(h.stopped, namespace+"/"+jobID)
}

// applyFrom applies the entries of l from position from on, failing on an
// entry that returns an error.
func (l *fsmLog) applyFrom(t *testing.T, f *fsm.FSM, from int) {
	t.Helper()
	for _, e := range l.entries[from:] {
		if resp := f.Apply(e); resp != nil {
			if err, ok := resp.(error); ok {
				t.Fatalf("entry %d (%s) failed: %v", e.Index, structs.MessageType(e.Data[0]), err)
			}
		}
	}
}

func fsmBatchJob(id string) *structs.Job {
	j := fsmTestJob(id)
	j.Type = structs.JobTypeBatch
	j.Canonicalize()
	return j
}

// gcFixture is an FSM holding finished batch jobs a, b, c (dead, their
// evals complete) and nodes n1, n2 (down), as garbage collection would
// find them; read holds the ModifyIndex of each as GC read it.
func gcFixture(t *testing.T, hooks fsm.Hooks) (*fsm.FSM, *fsmLog, map[string]uint64) {
	t.Helper()
	f, err := fsm.New(hclog.NewNullLogger(), hooks)
	if err != nil {
		t.Fatal(err)
	}
	l := &fsmLog{t: t}
	for _, id := range []string{"c", "a", "b"} {
		job := fsmBatchJob(id)
		l.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: evalFor("e-"+id, job, structs.EvalStatusPending)})
		l.add(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{evalFor("e-"+id, job, structs.EvalStatusComplete)}})
	}
	for _, id := range []string{"n1", "n2"} {
		l.add(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: fsmTestNode(id)})
		l.add(structs.NodeUpdateStatusRequestType, &structs.NodeUpdateStatusRequest{NodeID: id, Status: structs.NodeStatusDown, UpdatedAt: 1})
	}
	l.applyTo(t, f)
	read := map[string]uint64{}
	st := f.State()
	for _, id := range []string{"a", "b", "c"} {
		j, _ := st.JobByID(nil, "default", id)
		if j == nil || j.Status != structs.JobStatusDead {
			t.Fatalf("fixture: job %s = %+v, want dead", id, j)
		}
		read[id] = j.ModifyIndex
	}
	for _, id := range []string{"n1", "n2"} {
		n, _ := st.NodeByID(nil, id)
		read[id] = n.ModifyIndex
	}
	return f, l, read
}

func gcJobsEntry(read map[string]uint64, ids ...string) *structs.JobBatchDeregisterRequest {
	req := &structs.JobBatchDeregisterRequest{Jobs: map[structs.NamespacedID]*structs.JobDeregisterOptions{}}
	for _, id := range ids {
		req.Jobs[structs.NamespacedID{Namespace: "default", ID: id}] = &structs.JobDeregisterOptions{Purge: true, ExpectedModifyIndex: read[id]}
	}
	return req
}

// Finding: a GC entry purged a job registered again between GC's read and
// the apply, and deleted a down node that had come back.
func TestFSMGCEntriesWhoseExpectationsNoLongerHoldDeleteNothing(t *testing.T) {
	f, l, read := gcFixture(t, nil)
	from := len(l.entries)
	// Between GC's read and its entries: every job is registered again
	// (b with a new spec, a and c unchanged, which still moves their
	// ModifyIndex and makes them pending), and both nodes come back.
	for _, id := range []string{"a", "b", "c"} {
		job := fsmBatchJob(id)
		if id == "b" {
			job.TaskGroups[0].Count = 3
		}
		l.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: evalFor("e2-"+id, job, structs.EvalStatusPending)})
	}
	for _, id := range []string{"n1", "n2"} {
		l.add(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: fsmTestNode(id)})
	}
	l.add(structs.JobBatchDeregisterRequestType, gcJobsEntry(read, "a", "b", "c"))
	l.add(structs.NodeBatchDeregisterRequestType, &structs.NodeBatchDeregisterRequest{NodeIDs: []string{"n1", "n2"}, NodeModifyIndexes: map[string]uint64{"n1": read["n1"], "n2": read["n2"]}})
	before, _ := f.State().LatestIndex()
	l.applyFrom(t, f, from)

	st := f.State()
	for _, id := range []string{"a", "b", "c"} {
		if j, _ := st.JobByID(nil, "default", id); j == nil {
			t.Fatalf("job %s, registered again after GC's read, was purged", id)
		}
	}
	for _, id := range []string{"n1", "n2"} {
		if n, _ := st.NodeByID(nil, id); n == nil || n.Status != structs.NodeStatusReady {
			t.Fatalf("node %s, back after GC's read, was deleted: %+v", id, n)
		}
	}
	if after, _ := st.LatestIndex(); after <= before {
		t.Fatal("entries not applied")
	}
}

// The positive side of the same entries: unchanged jobs and nodes go, and
// a job or node that is already gone is skipped without failing the entry.
func TestFSMGCEntriesDeleteWhatIsUnchanged(t *testing.T) {
	hooks := &recordingHooks{}
	f, l, read := gcFixture(t, hooks)
	from := len(l.entries)
	job := fsmBatchJob("b")
	job.TaskGroups[0].Count = 3
	l.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: evalFor("e2-b", job, structs.EvalStatusPending)})
	l.add(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: fsmTestNode("n2")})
	l.add(structs.NodeDeregisterRequestType, &structs.NodeDeregisterRequest{NodeID: "n1"})
	read["gone"] = 3
	l.add(structs.JobBatchDeregisterRequestType, gcJobsEntry(read, "c", "b", "a", "gone"))
	l.add(structs.NodeBatchDeregisterRequestType, &structs.NodeBatchDeregisterRequest{NodeIDs: []string{"n1", "n2"}, NodeModifyIndexes: map[string]uint64{"n1": read["n1"], "n2": read["n2"]}})
	hooks.stopped = nil
	l.applyFrom(t, f, from)

	st := f.State()
	for id, want := range map[string]bool{"a": false, "b": true, "c": false} {
		if j, _ := st.JobByID(nil, "default", id); (j != nil) != want {
			t.Fatalf("job %s present = %v, want %v", id, j != nil, want)
		}
	}
	if n, _ := st.NodeByID(nil, "n2"); n == nil {
		t.Fatal("node n2, back after GC's read, was deleted")
	}
	// Purged jobs are handled in key order, never map order.
	if fmt.Sprint(hooks.stopped) != "[default/a default/c]" {
		t.Fatalf("JobStopped calls = %v, want [default/a default/c]", hooks.stopped)
	}
}

// Every server must end with the same state from the same entry, whatever
// order its map of jobs decodes in.
func TestFSMJobBatchDeregisterIsDeterministic(t *testing.T) {
	var want string
	for i := 0; i < 20; i++ {
		hooks := &recordingHooks{}
		f, l, read := gcFixture(t, hooks)
		from := len(l.entries)
		l.add(structs.JobBatchDeregisterRequestType, gcJobsEntry(read, "a", "b", "c"))
		hooks.stopped = nil
		l.applyFrom(t, f, from)
		idx, _ := f.State().Index("job_summary")
		got := fmt.Sprint(hooks.stopped, idx)
		if i == 0 {
			want = got
		} else if got != want {
			t.Fatalf("run %d: %s, run 0: %s", i, got, want)
		}
	}
}

// A service job with nothing to run (scaled to zero) is dead but still the
// user's: only stopping it makes it garbage.
func TestGCKeepsADeadServiceJobUntilItIsStopped(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	reg := registerJob(t, s, itJob("idle", 0))
	waitEvalDone(t, s, reg.EvalID)
	if j, _ := s.State().JobByID(nil, "default", "idle"); j.Status != structs.JobStatusDead {
		t.Fatalf("job status = %q, want dead", j.Status)
	}
	forceGC(t, s)
	if j, _ := s.State().JobByID(nil, "default", "idle"); j == nil {
		t.Fatal("GC purged a service job the user did not stop")
	}
	var dresp structs.JobDeregisterResponse
	if err := s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: "idle"}, &dresp); err != nil {
		t.Fatal(err)
	}
	waitEvalDone(t, s, dresp.EvalID)
	forceGC(t, s)
	if j, _ := s.State().JobByID(nil, "default", "idle"); j != nil {
		t.Fatal("GC kept a stopped job with nothing left")
	}
}
