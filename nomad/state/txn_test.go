package state

import (
	"testing"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/structs"
)

// countingStore is a store that counts its commits.
func countingStore(t *testing.T) (*StateStore, *int) {
	t.Helper()
	commits := 0
	s, err := NewStateStore(&StateStoreConfig{AfterCommit: func() { commits++ }})
	if err != nil {
		t.Fatal(err)
	}
	return s, &commits
}

// allRows reads every row of every table, for comparing a whole store.
func allRows(t *testing.T, s *StateStore) map[string][]any {
	t.Helper()
	txn := s.readTxn()
	out := map[string][]any{}
	for table := range stateSchema().Tables {
		iter, err := txn.Get(table, "id")
		if err != nil {
			t.Fatalf("reading %s: %v", table, err)
		}
		for raw := iter.Next(); raw != nil; raw = iter.Next() {
			out[table] = append(out[table], raw)
		}
	}
	return out
}

// atomicFixture is a node with a running alloc of a job, written at
// indexes 1 to 4.
func atomicFixture(t *testing.T, s *StateStore) *structs.Job {
	t.Helper()
	mustNoErr(t, s.Write(1, func(tx *Txn) error { return tx.UpsertNode(testNode("n1"), nil) }))
	job := mustJob(t, s, 2, testJob("web"))
	mustNoErr(t, s.Write(3, func(tx *Txn) error {
		return tx.UpsertPlanResults(&structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{testAlloc("a1", job, "n1")}, Job: job, UpdatedAt: 30})
	}))
	mustNoErr(t, s.Write(4, func(tx *Txn) error {
		return tx.UpdateAllocsFromClient([]*structs.Allocation{{ID: "a1", ClientStatus: structs.AllocClientStatusRunning}})
	}))
	return job
}

// Each change an FSM entry combines with evals, followed by evals of which
// one is invalid: the write fails and the store is exactly as before, with
// nothing committed at all.
func TestWriteKeepsNothingWhenALaterChangeFails(t *testing.T) {
	firsts := map[string]func(txn *Txn) error{
		"node status": func(txn *Txn) error {
			return txn.UpdateNodeStatus("n1", structs.NodeStatusDown, 50, &structs.NodeEvent{Message: "down"})
		},
		"node eligibility": func(txn *Txn) error {
			return txn.UpdateNodeEligibility("n1", structs.NodeSchedulingIneligible, 50, nil)
		},
		"client alloc update": func(txn *Txn) error {
			return txn.UpdateAllocsFromClient([]*structs.Allocation{{ID: "a1", ClientStatus: structs.AllocClientStatusFailed}})
		},
		"job stop": func(txn *Txn) error {
			_, err := txn.DeregisterJob(JobDeregistration{Namespace: "default", ID: "web", SubmitTime: 50})
			return err
		},
		"job purge": func(txn *Txn) error {
			_, err := txn.DeregisterJob(JobDeregistration{Namespace: "default", ID: "web", Purge: true})
			return err
		},
	}
	for name, first := range firsts {
		t.Run(name, func(t *testing.T) {
			s, commits := countingStore(t)
			job := atomicFixture(t, s)
			before, committed := allRows(t, s), *commits
			err := s.Write(5, func(txn *Txn) error {
				if err := first(txn); err != nil {
					t.Fatalf("the first change must succeed on its own: %v", err)
				}
				noID := testEval("", job)
				return txn.UpsertEvals([]*structs.Evaluation{testEval("e-ok", job), noID})
			})
			if err == nil {
				t.Fatal("an eval without an ID must fail the write")
			}
			if *commits != committed {
				t.Fatalf("a failed write committed %d times", *commits-committed)
			}
			if after := allRows(t, s); !structs.DeepEqual(before, after) {
				t.Fatal("a failed write changed the store")
			}
			if idx, _ := s.LatestIndex(); idx != 4 {
				t.Fatalf("latest index %d after a failed write at 5, want 4", idx)
			}
		})
	}
}

// A write of several changes is one commit: every table it touched has the
// write's index, and the job's status is computed from all of it (a job
// whose last alloc failed but that has a pending eval is pending, not dead).
func TestWriteCommitsEveryChangeOnce(t *testing.T) {
	s, commits := countingStore(t)
	job := atomicFixture(t, s)
	committed := *commits
	err := s.Write(5, func(txn *Txn) error {
		if err := txn.UpdateAllocsFromClient([]*structs.Allocation{{ID: "a1", ClientStatus: structs.AllocClientStatusFailed}}); err != nil {
			return err
		}
		if err := txn.UpdateNodeStatus("n1", structs.NodeStatusDown, 50, nil); err != nil {
			return err
		}
		return txn.UpsertEvals([]*structs.Evaluation{testEval("e-resched", job)})
	})
	mustNoErr(t, err)
	if got := *commits - committed; got != 1 {
		t.Fatalf("%d commits, want 1", got)
	}
	for _, table := range []string{TableAllocs, TableNodes, TableEvals, TableJobs} {
		if idx, _ := s.Index(table); idx != 5 {
			t.Errorf("index of %s is %d, want 5", table, idx)
		}
	}
	if j, _ := s.JobByID(nil, "default", "web"); j.Status != structs.JobStatusPending || j.ModifyIndex != 5 {
		t.Fatalf("job status %s at %d, want pending at 5", j.Status, j.ModifyIndex)
	}
}

// A stop through DeregisterJob records the user's submit time; a job
// that is already stopped still counts as stopped, and a missing one not.
func TestDeregisterJob(t *testing.T) {
	s := testStateStore(t)
	atomicFixture(t, s)
	var got []bool
	mustNoErr(t, s.Write(5, func(txn *Txn) error {
		for _, id := range []string{"web", "web", "gone"} {
			ok, err := txn.DeregisterJob(JobDeregistration{ID: id, SubmitTime: 55})
			if err != nil {
				return err
			}
			got = append(got, ok)
		}
		return nil
	}))
	if !structs.DeepEqual(got, []bool{true, true, false}) {
		t.Fatalf("stopped = %v, want [true true false]", got)
	}
	j, _ := s.JobByID(nil, "default", "web")
	if !j.Stop || j.SubmitTime != 55 || j.ModifyIndex != 5 {
		t.Fatalf("job stop=%v submit=%d modify=%d, want stopped at 5 with submit time 55", j.Stop, j.SubmitTime, j.ModifyIndex)
	}
}

// A write that fails part way, after it changed a table, keeps nothing:
// the rows it inserted are gone, the table's index stays where it was,
// nothing is committed, OnChanges hears nothing and a reader watching the
// table is not woken.
func TestFailedWriteLeavesNoPartialChange(t *testing.T) {
	commits, changes := 0, 0
	s, err := NewStateStore(&StateStoreConfig{
		AfterCommit: func() { commits++ },
		OnChanges:   func(memdb.Changes) { changes++ },
	})
	mustNoErr(t, err)
	mustNoErr(t, s.Write(3, func(tx *Txn) error {
		return tx.UpsertACLPolicies([]*structs.ACLPolicy{{Name: "ops", Rules: "a"}})
	}))
	before, committedBefore, changesBefore := allRows(t, s), commits, changes
	iter, err := s.ACLPolicies(memdb.NewWatchSet())
	mustNoErr(t, err)
	watch := iter.WatchCh()

	err = s.Write(7, func(tx *Txn) error {
		// The first policy is inserted, the second one is refused.
		return tx.UpsertACLPolicies([]*structs.ACLPolicy{{Name: "dev", Rules: "b"}, {Rules: "no name"}})
	})
	if err == nil {
		t.Fatal("a policy without a name must fail the write")
	}
	if p, _ := s.ACLPolicyByName(nil, "dev"); p != nil {
		t.Fatal("the policy written before the failure was kept")
	}
	if idx, _ := s.Index(TableACLPolicies); idx != 3 {
		t.Fatalf("policies index %d after a failed write at 7, want 3", idx)
	}
	if !structs.DeepEqual(before, allRows(t, s)) {
		t.Fatal("a failed write changed the store")
	}
	if commits != committedBefore || changes != changesBefore {
		t.Fatalf("a failed write committed %d times and reported %d changes", commits-committedBefore, changes-changesBefore)
	}
	select {
	case <-watch:
		t.Fatal("a failed write woke a reader")
	default:
	}

	// The same store still takes the next write, at the failed one's index.
	mustNoErr(t, s.Write(7, func(tx *Txn) error {
		return tx.UpsertACLPolicies([]*structs.ACLPolicy{{Name: "dev", Rules: "b"}})
	}))
	if idx, _ := s.Index(TableACLPolicies); idx != 7 {
		t.Fatalf("policies index %d after a write at 7", idx)
	}
	select {
	case <-watch:
	default:
		t.Fatal("a committed write did not wake the reader")
	}
}
