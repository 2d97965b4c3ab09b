package state

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

func TestAllocIsGCable(t *testing.T) {
	running := func(j *structs.Job) *structs.Job { c := j.Copy(); c.Status = structs.JobStatusRunning; return c }
	dead := func(j *structs.Job) *structs.Job { c := j.Copy(); c.Status = structs.JobStatusDead; return c }
	stopped := func(j *structs.Job) *structs.Job { c := dead(j); c.Stop = true; return c }
	withPolicy := func(j *structs.Job, p *structs.ReschedulePolicy) *structs.Job {
		c := j.Copy()
		c.TaskGroups[0].ReschedulePolicy = p
		return c
	}
	batch := testBatchJob("report")
	batch.CreateIndex = 10
	service := testJob("web")
	service.CreateIndex = 10
	limited := &structs.ReschedulePolicy{Attempts: 2, Interval: time.Hour, Delay: time.Second, DelayFunction: structs.DelayFunctionConstant}
	unlimited := &structs.ReschedulePolicy{Unlimited: true, Delay: time.Second, DelayFunction: structs.DelayFunctionConstant}
	failedAt := time.Unix(1_700_000_000, 0)

	alloc := func(job *structs.Job, status string, change func(*structs.Allocation)) *structs.Allocation {
		a := testAlloc("a1", job, "n1")
		a.ClientStatus = status
		a.ModifyTime = failedAt.UnixNano()
		if change != nil {
			change(a)
		}
		return a
	}
	tracker := func(n int) func(*structs.Allocation) {
		return func(a *structs.Allocation) {
			a.RescheduleTracker = &structs.RescheduleTracker{}
			for i := 0; i < n; i++ {
				a.RescheduleTracker.Events = append(a.RescheduleTracker.Events, &structs.RescheduleEvent{RescheduleTime: failedAt.Add(-time.Duration(i+1) * time.Minute).UnixNano()})
			}
		}
	}

	cases := []struct {
		name  string
		alloc *structs.Allocation
		job   *structs.Job
		want  bool
	}{
		{"a running alloc is never collected, even of a stopped job", alloc(batch, structs.AllocClientStatusRunning, nil), stopped(batch), false},
		{"an alloc stopped by the servers but still running on its client stays", alloc(service, structs.AllocClientStatusRunning, func(a *structs.Allocation) { a.DesiredStatus = structs.AllocDesiredStatusStop }), stopped(service), false},
		{"a completed batch alloc of a running job holds its slot", alloc(batch, structs.AllocClientStatusComplete, nil), running(batch), false},
		{"a completed sysbatch alloc of a pending job holds its slot", alloc(batch, structs.AllocClientStatusComplete, nil), func() *structs.Job {
			j := batch.Copy()
			j.Type = structs.JobTypeSysBatch
			j.Status = structs.JobStatusPending
			return j
		}(), false},
		{"a completed batch alloc of a dead job goes", alloc(batch, structs.AllocClientStatusComplete, nil), dead(batch), true},
		{"a completed batch alloc of a stopped job goes", alloc(batch, structs.AllocClientStatusComplete, nil), stopped(batch), true},
		{"a completed batch alloc whose job is gone goes", alloc(batch, structs.AllocClientStatusComplete, nil), nil, true},
		{"a completed batch alloc of a purged and re-registered job goes", alloc(batch, structs.AllocClientStatusComplete, nil), func() *structs.Job { j := running(batch); j.CreateIndex = 99; return j }(), true},
		{"a completed service alloc of a running job goes", alloc(service, structs.AllocClientStatusComplete, nil), running(service), true},
		{"a failed alloc waiting for a delayed reschedule stays", alloc(service, structs.AllocClientStatusFailed, func(a *structs.Allocation) { a.FollowupEvalID = "follow" }), withPolicy(running(service), unlimited), false},
		{"a failed batch alloc with attempts left stays even when the job is dead", alloc(batch, structs.AllocClientStatusFailed, tracker(1)), withPolicy(dead(batch), limited), false},
		{"a failed alloc out of attempts goes", alloc(service, structs.AllocClientStatusFailed, tracker(2)), withPolicy(running(service), limited), true},
		{"attempts older than the interval before the failure do not count", alloc(service, structs.AllocClientStatusFailed, func(a *structs.Allocation) {
			a.RescheduleTracker = &structs.RescheduleTracker{Events: []*structs.RescheduleEvent{
				{RescheduleTime: failedAt.Add(-2 * time.Hour).UnixNano()}, {RescheduleTime: failedAt.Add(-90 * time.Minute).UnixNano()}}}
		}), withPolicy(running(service), limited), false},
		{"a failed alloc already replaced goes", alloc(service, structs.AllocClientStatusFailed, func(a *structs.Allocation) { a.NextAllocation = "a2" }), withPolicy(running(service), unlimited), true},
		{"a failed alloc the servers stopped goes", alloc(service, structs.AllocClientStatusFailed, func(a *structs.Allocation) { a.DesiredStatus = structs.AllocDesiredStatusStop }), withPolicy(running(service), unlimited), true},
		{"a failed alloc without a reschedule policy goes", alloc(service, structs.AllocClientStatusFailed, nil), withPolicy(running(service), nil), true},
		{"a reschedulable failed alloc of a stopped job goes", alloc(service, structs.AllocClientStatusFailed, nil), withPolicy(stopped(service), unlimited), true},
		{"a reschedulable failed alloc whose job is gone goes", alloc(service, structs.AllocClientStatusFailed, nil), nil, true},
		{"a forced reschedule keeps a failed alloc", alloc(service, structs.AllocClientStatusFailed, func(a *structs.Allocation) {
			tracker(2)(a)
			a.DesiredTransition.ForceReschedule = structs.BoolPtr(true)
		}), withPolicy(running(service), limited), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := AllocIsGCable(c.alloc, c.job); got != c.want {
				t.Fatalf("AllocIsGCable = %v, want %v", got, c.want)
			}
		})
	}
}

// completedBatch builds a batch job with two allocs on node n1, one
// completed (a1, from eval e1) and one still running (a2, from e2), both
// evals complete. The job is running.
func completedBatch(t *testing.T) (*StateStore, *structs.Job) {
	t.Helper()
	s := testStateStore(t)
	mustNoErr(t, s.Write(1, func(tx *Txn) error { return tx.UpsertNode(testNode("n1"), nil) }))
	job := mustJob(t, s, 2, testBatchJob("report"))
	e1, e2 := testEval("e1", job), testEval("e2", job)
	e1.Status, e2.Status = structs.EvalStatusComplete, structs.EvalStatusComplete
	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.UpsertEvals([]*structs.Evaluation{e1, e2}) }))
	a1, a2 := testAlloc("a1", job, "n1"), testAlloc("a2", job, "n1")
	a1.EvalID, a2.EvalID = "e1", "e2"
	mustNoErr(t, s.Write(4, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a1, a2}) }))
	done := a1.Copy()
	done.ClientStatus = structs.AllocClientStatusComplete
	run := a2.Copy()
	run.ClientStatus = structs.AllocClientStatusRunning
	mustNoErr(t, s.Write(5, func(tx *Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{done, run}) }))
	if j, _ := s.JobByID(nil, "default", "report"); j.Status != structs.JobStatusRunning {
		t.Fatalf("job status = %q, want running", j.Status)
	}
	return s, job
}

func TestDeleteEvalsKeepsACompletedBatchAllocWhileItsJobRuns(t *testing.T) {
	s, _ := completedBatch(t)
	// A GC that decided on an older read (when the job was dead, say).
	mustNoErr(t, s.Write(6, func(tx *Txn) error { return tx.DeleteEvals([]string{"e1"}, []string{"a1"}) }))
	if a, _ := s.AllocByID(nil, "a1"); a == nil {
		t.Fatal("the completed alloc of a running batch job was deleted: its work would run again")
	}
	if e, _ := s.EvalByID(nil, "e1"); e == nil {
		t.Fatal("the eval of a kept alloc was deleted: the alloc would never be collected")
	}

	// Once the job is done, both go.
	a2, _ := s.AllocByID(nil, "a2")
	done := a2.Copy()
	done.ClientStatus = structs.AllocClientStatusComplete
	mustNoErr(t, s.Write(7, func(tx *Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{done}) }))
	if j, _ := s.JobByID(nil, "default", "report"); j.Status != structs.JobStatusDead {
		t.Fatalf("job status = %q, want dead", j.Status)
	}
	mustNoErr(t, s.Write(8, func(tx *Txn) error { return tx.DeleteEvals([]string{"e1"}, []string{"a1"}) }))
	if a, _ := s.AllocByID(nil, "a1"); a != nil {
		t.Fatal("a1 not deleted once its job is dead")
	}
	if e, _ := s.EvalByID(nil, "e1"); e != nil {
		t.Fatal("e1 not deleted once its job is dead")
	}
}

func TestDeleteEvalsNeverDeletesAnAllocItsClientStillRuns(t *testing.T) {
	s, _ := completedBatch(t)
	mustNoErr(t, s.Write(6, func(tx *Txn) error { return tx.DeleteEvals([]string{"e2"}, []string{"a2"}) }))
	if a, _ := s.AllocByID(nil, "a2"); a == nil {
		t.Fatal("a running alloc was deleted (promise 2)")
	}
}

// The node's deleted-allocs index: it moves when GC deletes one of the
// node's allocs, wakes a watcher, and goes away with the node.
func TestDeletingANodesAllocMovesItsDeletedIndexAndWakesWatchers(t *testing.T) {
	s, _ := completedBatch(t)
	a1, _ := s.AllocByID(nil, "a1")
	mustNoErr(t, s.Write(6, func(tx *Txn) error {
		return tx.UpdateAllocsFromClient([]*structs.Allocation{{ID: "a2", ClientStatus: structs.AllocClientStatusComplete}})
	}))

	// Watching the row before it exists: its creation wakes the watcher.
	ws := memdb.NewWatchSet()
	before, err := s.NodeAllocsDeletedIndex(ws, "n1")
	mustNoErr(t, err)
	if before != 0 {
		t.Fatalf("deleted index before any deletion = %d, want 0", before)
	}
	mustNoErr(t, s.Write(20, func(tx *Txn) error { return tx.DeleteEvals([]string{"e1"}, []string{a1.ID}) }))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ws.WatchCtx(ctx); err != nil {
		t.Fatal("the first deletion of an alloc of the node did not wake a watcher of its deleted index")
	}
	if got, _ := s.NodeAllocsDeletedIndex(nil, "n1"); got != 20 {
		t.Fatalf("deleted index = %d, want 20", got)
	}

	// And a later deletion moves it, waking a watcher again.
	ws = memdb.NewWatchSet()
	_, err = s.NodeAllocsDeletedIndex(ws, "n1")
	mustNoErr(t, err)
	mustNoErr(t, s.Write(21, func(tx *Txn) error { return tx.DeleteEvals([]string{"e2"}, []string{"a2"}) }))
	if err := ws.WatchCtx(ctx); err != nil {
		t.Fatal("a watcher of the deleted index did not wake")
	}
	if got, _ := s.NodeAllocsDeletedIndex(nil, "n1"); got != 21 {
		t.Fatalf("deleted index = %d, want 21", got)
	}

	// The node goes: so does its row.
	mustNoErr(t, s.Write(22, func(tx *Txn) error { return tx.DeleteNode([]string{"n1"}) }))
	if got, _ := s.NodeAllocsDeletedIndex(nil, "n1"); got != 0 {
		t.Fatalf("deleted index of a deleted node = %d, want 0", got)
	}
}

func TestDeletingAnAllocOfAnUnknownNodeWritesNoRow(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 1, testJob("web"))
	a := testAlloc("a1", job, "gone")
	a.ClientStatus = structs.AllocClientStatusComplete
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a}) }))
	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.DeleteEvals(nil, []string{"a1"}) }))
	if a, _ := s.AllocByID(nil, "a1"); a != nil {
		t.Fatal("alloc not deleted")
	}
	iter, err := s.Indexes()
	mustNoErr(t, err)
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		if e := raw.(*IndexEntry); e.Key == nodeAllocsDeletedKey("gone") {
			t.Fatal("a row was written for a node that does not exist")
		}
	}
}

// A client's assignment query over a real BlockingQuery: its index never
// goes back when the newest alloc is deleted, and a blocked query returns.
func TestAssignmentIndexNeverGoesBackAcrossAGC(t *testing.T) {
	s, _ := completedBatch(t)
	// a2 (the newest, AllocModifyIndex 4 like a1) finishes; a new alloc a3
	// is placed at 10 and finishes: it is the node's newest.
	mustNoErr(t, s.Write(6, func(tx *Txn) error {
		return tx.UpdateAllocsFromClient([]*structs.Allocation{{ID: "a2", ClientStatus: structs.AllocClientStatusComplete}})
	}))
	job, _ := s.JobByID(nil, "default", "report")
	a3 := testAlloc("a3", job, "n1")
	a3.EvalID = "e3"
	a3.ClientStatus = structs.AllocClientStatusComplete
	mustNoErr(t, s.Write(10, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a3}) }))
	assignment := func(ws memdb.WatchSet, st *StateStore) (interface{}, uint64, error) {
		allocs, err := st.AllocsByNode(ws, "n1")
		if err != nil {
			return nil, 0, err
		}
		idx, err := st.NodeAllocsDeletedIndex(ws, "n1")
		for _, a := range allocs {
			idx = max(idx, a.AllocModifyIndex)
		}
		return len(allocs), idx, err
	}
	_, before, err := assignment(nil, s)
	mustNoErr(t, err)
	if before != 10 {
		t.Fatalf("assignment index = %d, want 10", before)
	}

	type answer struct {
		n   int
		idx uint64
		err error
	}
	got := make(chan answer, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		n, idx, err := s.BlockingQuery(ctx, before, assignment)
		got <- answer{n.(int), idx, err}
	}()
	mustNoErr(t, s.Write(11, func(tx *Txn) error { return tx.DeleteEvals(nil, []string{"a3"}) }))
	select {
	case a := <-got:
		mustNoErr(t, a.err)
		if a.idx != 11 || a.n != 2 {
			t.Fatalf("after deleting the newest alloc: %d allocs at index %d, want 2 at 11", a.n, a.idx)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a blocked assignment query did not wake on the deletion")
	}
}

func TestDeregisterJobsSkipsJobsThatChanged(t *testing.T) {
	s := testStateStore(t)
	// Three stopped, dead jobs as GC reads them.
	for i, id := range []string{"a", "b", "c"} {
		j := testJob(id)
		j.Stop = true
		mustJob(t, s, uint64(10+i), j)
	}
	read := map[string]uint64{}
	for _, id := range []string{"a", "b", "c"} {
		j, _ := s.JobByID(nil, "default", id)
		if j.Status != structs.JobStatusDead {
			t.Fatalf("job %s status = %q, want dead", id, j.Status)
		}
		read[id] = j.ModifyIndex
	}
	// Then b is registered again (running), and c gets an alloc that is
	// stopped but still running on its client (c stays dead).
	mustJob(t, s, 20, testJob("b"))
	c, _ := s.JobByID(nil, "default", "c")
	ca := testAlloc("c1", c, "n1")
	ca.DesiredStatus = structs.AllocDesiredStatusStop
	ca.ClientStatus = structs.AllocClientStatusRunning
	mustNoErr(t, s.Write(21, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{ca}) }))
	if c, _ := s.JobByID(nil, "default", "c"); c.Status != structs.JobStatusDead || c.ModifyIndex != read["c"] {
		t.Fatalf("job c = %s at %d, want dead at %d", c.Status, c.ModifyIndex, read["c"])
	}

	read["missing"] = 7
	var jobs []JobDeregistration
	for _, id := range []string{"c", "b", "a", "missing"} {
		jobs = append(jobs, JobDeregistration{Namespace: "default", ID: id, Purge: true, ExpectedModifyIndex: read[id]})
	}
	done, err := writeResult(s, 30, func(tx *Txn) ([]structs.NamespacedID, error) { return tx.DeregisterJobs(jobs, nil) })
	mustNoErr(t, err)
	if len(done) != 1 || done[0].ID != "a" {
		t.Fatalf("purged %v, want only a", done)
	}
	for id, want := range map[string]bool{"a": false, "b": true, "c": true} {
		if j, _ := s.JobByID(nil, "default", id); (j != nil) != want {
			t.Fatalf("job %s present = %v, want %v", id, j != nil, want)
		}
	}
}

func TestDeleteNodesIfUnchangedSkipsNodesThatChanged(t *testing.T) {
	s := testStateStore(t)
	for i, id := range []string{"n1", "n2", "n3"} {
		mustNoErr(t, s.Write(uint64(1+i), func(tx *Txn) error { return tx.UpsertNode(testNode(id), nil) }))
		mustNoErr(t, s.Write(uint64(10+i), func(tx *Txn) error { return tx.UpdateNodeStatus(id, structs.NodeStatusDown, 1, nil) }))
	}
	read := map[string]uint64{}
	for _, id := range []string{"n1", "n2", "n3"} {
		n, _ := s.NodeByID(nil, id)
		read[id] = n.ModifyIndex
	}
	// n2 comes back; n3 stays down but holds an alloc its client runs.
	mustNoErr(t, s.Write(20, func(tx *Txn) error { return tx.UpdateNodeStatus("n2", structs.NodeStatusReady, 2, nil) }))
	job := mustJob(t, s, 21, testJob("web"))
	a := testAlloc("a1", job, "n3")
	a.ClientStatus = structs.AllocClientStatusRunning
	mustNoErr(t, s.Write(22, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a}) }))

	read["gone"] = 5
	deleted, err := writeResult(s, 30, func(tx *Txn) ([]string, error) {
		return tx.DeleteNodesIfUnchanged([]string{"n1", "n2", "n3", "gone"}, read)
	})
	mustNoErr(t, err)
	if len(deleted) != 1 || deleted[0] != "n1" {
		t.Fatalf("deleted %v, want only n1", deleted)
	}
	for id, want := range map[string]bool{"n1": false, "n2": true, "n3": true} {
		if n, _ := s.NodeByID(nil, id); (n != nil) != want {
			t.Fatalf("node %s present = %v, want %v", id, n != nil, want)
		}
	}
	// Without an expectation a node is deleted as DeleteNode would, and a
	// missing one is an error that deletes nothing.
	if _, err := writeResult(s, 31, func(tx *Txn) ([]string, error) { return tx.DeleteNodesIfUnchanged([]string{"n2", "gone"}, nil) }); !errors.Is(err, structs.ErrNotFound) {
		t.Fatalf("err = %v, want not found", err)
	}
	if n, _ := s.NodeByID(nil, "n2"); n == nil {
		t.Fatal("a failed batch deleted a node")
	}
}
