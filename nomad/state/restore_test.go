package state

import (
	"testing"

	"github.com/drover-sched/drover/structs"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	memdb "github.com/hashicorp/go-memdb"
)

// populated returns a store with a row in every table.
func populated(t *testing.T) *StateStore {
	t.Helper()
	s := testStateStore(t)
	mustNoErr(t, s.Write(1, func(tx *Txn) error { return tx.UpsertNode(testNode("n1"), nil) }))
	mustJob(t, s, 2, testJob("web"))
	changed := testJob("web")
	changed.Priority = 70
	job := mustJob(t, s, 3, changed)
	mustNoErr(t, s.Write(4, func(tx *Txn) error { return tx.UpsertEvals([]*structs.Evaluation{testEval("e1", job)}) }))
	mustNoErr(t, s.Write(5, func(tx *Txn) error {
		return tx.UpsertDeployment(&structs.Deployment{ID: "d1", Namespace: "default", JobID: "web"})
	}))
	mustNoErr(t, s.Write(6, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{testAlloc("a1", job, "n1")}) }))
	mustNoErr(t, s.Write(7, func(tx *Txn) error {
		return tx.SchedulerSetConfig(&structs.SchedulerConfiguration{SchedulerAlgorithm: structs.SchedulerAlgorithmSpread})
	}))
	mustNoErr(t, s.Write(8, func(tx *Txn) error { return tx.KVSet("k", "v") }))
	return s
}

// copyInto persists src the way the FSM does (one iterator per table) and
// restores it into dst.
func copyInto(t *testing.T, src *StateSnapshot, dst *StateStore) {
	t.Helper()
	r, err := dst.Restore()
	mustNoErr(t, err)
	defer r.Abort()
	each := func(iter memdb.ResultIterator, err error) func(put func(any) error) {
		mustNoErr(t, err)
		return func(put func(any) error) {
			for raw := iter.Next(); raw != nil; raw = iter.Next() {
				mustNoErr(t, put(raw))
			}
		}
	}
	each(src.Nodes(nil))(func(o any) error { return r.NodeRestore(o.(*structs.Node)) })
	each(src.Jobs(nil))(func(o any) error { return r.JobRestore(o.(*structs.Job)) })
	each(src.JobVersions(nil))(func(o any) error { return r.JobVersionRestore(o.(*structs.Job)) })
	each(src.JobSummaries(nil))(func(o any) error { return r.JobSummaryRestore(o.(*structs.JobSummary)) })
	each(src.Evals(nil))(func(o any) error { return r.EvalRestore(o.(*structs.Evaluation)) })
	each(src.Allocs(nil))(func(o any) error { return r.AllocRestore(o.(*structs.Allocation)) })
	each(src.Deployments(nil))(func(o any) error { return r.DeploymentRestore(o.(*structs.Deployment)) })
	each(src.Indexes())(func(o any) error { return r.IndexRestore(o.(*IndexEntry)) })
	each(src.KVs(nil))(func(o any) error { return r.KVRestore(o.(*KVEntry)) })
	if _, cfg, err := src.SchedulerConfig(); err == nil && cfg.ModifyIndex != 0 {
		mustNoErr(t, r.SchedulerConfigRestore(cfg))
	}
	mustNoErr(t, r.Commit())
}

func TestRestoreRoundTrip(t *testing.T) {
	src := populated(t)
	snap, err := src.Snapshot()
	mustNoErr(t, err)
	dst := testStateStore(t)
	copyInto(t, snap, dst)

	for _, table := range []string{TableNodes, TableJobs, TableJobVersion, TableJobSummary, TableEvals, TableAllocs, TableDeployments, TableSchedulerConfig, TableKV} {
		want, _ := src.Index(table)
		got, _ := dst.Index(table)
		if got != want || want == 0 {
			t.Errorf("index of %s = %d, want %d", table, got, want)
		}
	}
	if li, _ := dst.LatestIndex(); li != 8 {
		t.Fatalf("latest index = %d, want 8", li)
	}
	wantJob, _ := src.JobByID(nil, "default", "web")
	gotJob, _ := dst.JobByID(nil, "default", "web")
	if !structs.DeepEqual(wantJob, gotJob) {
		t.Fatalf("job differs after restore (-want +got):\n%s", cmp.Diff(wantJob, gotJob, cmpopts.EquateEmpty()))
	}
	if v, _ := dst.JobVersionsByID(nil, "default", "web"); len(v) != 2 {
		t.Fatalf("%d versions restored, want 2", len(v))
	}
	wantAlloc, _ := src.AllocByID(nil, "a1")
	gotAlloc, _ := dst.AllocByID(nil, "a1")
	if !structs.DeepEqual(wantAlloc, gotAlloc) {
		t.Fatal("alloc differs after restore")
	}
	if live, _ := dst.AllocsByNodeTerminal(nil, "n1", false); len(live) != 1 {
		t.Fatal("secondary indexes not rebuilt by restore")
	}
	if sum, _ := dst.JobSummaryByID(nil, "default", "web"); sum == nil || sum.Summary["web"].Starting != 1 {
		t.Fatalf("summary = %+v", sum)
	}
	if n, _ := dst.NodeBySecretID(nil, "secret-n1"); n == nil {
		t.Fatal("node not found by secret after restore")
	}
	if e, _ := dst.EvalByID(nil, "e1"); e == nil {
		t.Fatal("eval missing")
	}
	if d, _ := dst.DeploymentByID(nil, "d1"); d == nil {
		t.Fatal("deployment missing")
	}
	if _, cfg, _ := dst.SchedulerConfig(); cfg.SchedulerAlgorithm != structs.SchedulerAlgorithmSpread {
		t.Fatalf("scheduler config = %+v", cfg)
	}
	if v, ok, _ := dst.KVGet(nil, "k"); !ok || v != "v" {
		t.Fatalf("kv = %q %v", v, ok)
	}
}

func TestAbortedRestoreLeavesTheStoreEmpty(t *testing.T) {
	dst := testStateStore(t)
	r, err := dst.Restore()
	mustNoErr(t, err)
	mustNoErr(t, r.NodeRestore(testNode("n1")))
	mustNoErr(t, r.IndexRestore(&IndexEntry{Key: TableNodes, Value: 9}))
	r.Abort()
	if n, _ := dst.NodeByID(nil, "n1"); n != nil {
		t.Fatal("aborted restore is visible")
	}
	if li, _ := dst.LatestIndex(); li != 0 {
		t.Fatalf("latest index = %d", li)
	}
}
