package nomad

import (
	"slices"
	"testing"
	"time"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// memGCDeps is an in-memory twin of the server for garbage collection: a
// real state store, and raft entries recorded instead of committed.
type memGCDeps struct {
	store   *state.StateStore
	entries map[structs.MessageType]any
}

func (d *memGCDeps) State() *state.StateStore { return d.store }

func (d *memGCDeps) raftApply(t structs.MessageType, msg any) (uint64, any, error) {
	d.entries[t] = msg
	return uint64(100 + len(d.entries)), nil, nil
}

// Collection decides on the state alone and writes one entry per kind of
// object: an old terminal eval and an old down node with nothing on it are
// collected, each conditional on what was read; a young one waits for its
// threshold.
func TestCoreGCAloneWritesWhatItFoundOld(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	store, err := state.NewStateStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	node := itNode("n1")
	node.Status, node.StatusUpdatedAt = structs.NodeStatusDown, now.Add(-2*time.Hour).Unix()
	if err := store.Write(1, func(tx *state.Txn) error { return tx.UpsertNode(node, nil) }); err != nil {
		t.Fatal(err)
	}
	old := &structs.Evaluation{ID: "old", Namespace: structs.DefaultNamespace, JobID: "j", Status: structs.EvalStatusComplete,
		Type: structs.JobTypeService, TriggeredBy: structs.EvalTriggerJobRegister, ModifyTime: now.Add(-2 * time.Hour).UnixNano()}
	young := &structs.Evaluation{ID: "young", Namespace: structs.DefaultNamespace, JobID: "j", Status: structs.EvalStatusComplete,
		Type: structs.JobTypeService, TriggeredBy: structs.EvalTriggerJobRegister, ModifyTime: now.UnixNano()}
	if err := store.Write(2, func(tx *state.Txn) error { return tx.UpsertEvals([]*structs.Evaluation{old, young}) }); err != nil {
		t.Fatal(err)
	}
	deps := &memGCDeps{store: store, entries: map[structs.MessageType]any{}}
	idx, err := coreGC{deps: deps}.collect(gcThresholds{now: now, eval: time.Hour, job: time.Hour, node: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	del, ok := deps.entries[structs.EvalDeleteRequestType].(*structs.EvalDeleteRequest)
	if !ok || !slices.Equal(del.Evals, []string{"old"}) {
		t.Fatalf("eval delete entry %+v; want only the old eval", deps.entries[structs.EvalDeleteRequestType])
	}
	nodes, ok := deps.entries[structs.NodeBatchDeregisterRequestType].(*structs.NodeBatchDeregisterRequest)
	if !ok || !slices.Equal(nodes.NodeIDs, []string{node.ID}) || nodes.NodeModifyIndexes[node.ID] != 1 {
		t.Fatalf("node deregister entry %+v; want n1 at modify index 1", deps.entries[structs.NodeBatchDeregisterRequestType])
	}
	if _, ok := deps.entries[structs.JobBatchDeregisterRequestType]; ok {
		t.Fatal("no job exists, yet a job purge was written")
	}
	if idx != 102 {
		t.Fatalf("collect returned index %d; want the last entry's, 102", idx)
	}
}
