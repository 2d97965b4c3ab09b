package nomad

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/helper/fuzzseed"
	"github.com/drover-sched/drover/structs"
)

// FuzzFSMApply applies an arbitrary committed entry to an FSM that holds a
// state with every table filled (the first entries of buildLog), as a
// peer that got an entry into the log, or a corrupt log, would make every
// server do. Whatever the entry:
//
//   - Apply never panics;
//   - an entry the FSM refuses changes nothing;
//   - two servers applying it end in the same state with the same answer
//     (Apply is deterministic);
//   - the state it leaves survives a snapshot and restore, as at a
//     restart: an accepted entry must not be poison later.
func FuzzFSMApply(f *testing.F) {
	all := buildLog(f).entries
	// Stop before the deregistrations, so every table has rows.
	base := all[:len(all)-4]
	for _, e := range all {
		f.Add(e.Data)
	}
	f.Add([]byte{byte(structs.JobRegisterRequestType), 0xc1})
	f.Add([]byte{byte(structs.IgnoreUnknownTypeFlag) | 99, 0x80})

	f.Fuzz(func(t *testing.T, data []byte) {
		entry := &raft.Log{Index: uint64(len(base) + 1), Type: raft.LogCommand, Data: data}
		a, b := fuzzFSM(t, base), fuzzFSM(t, base)
		before := dumpState(t, a.State())

		respA := applyNoPanic(t, a, entry)
		respB := applyNoPanic(t, b, entry)
		if fmt.Sprint(respA) != fmt.Sprint(respB) {
			t.Fatalf("two servers answered the same entry differently: %v and %v", respA, respB)
		}
		stateA := dumpState(t, a.State())
		if d := fuzzseed.Diff(stateA, dumpState(t, b.State())); d != "" {
			t.Fatalf("two servers applied the same entry differently: %s", d)
		}
		if _, refused := respA.(error); refused {
			if d := fuzzseed.Diff(before, stateA); d != "" {
				t.Fatalf("a refused entry (%v) changed the state: %s", respA, d)
			}
		}

		snap, err := a.Snapshot()
		if err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		sink := &memSink{}
		if err := snap.Persist(sink); err != nil {
			t.Fatalf("the state after the entry cannot be snapshotted: %v", err)
		}
		restored := testFSM(t)
		if err := restored.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
			t.Fatalf("the state after the entry (%v) cannot be restored: %v", respA, err)
		}
		if d := fuzzseed.Diff(stateA, dumpState(t, restored.State())); d != "" {
			t.Fatalf("the state after the entry changed in a snapshot restore: %s", d)
		}
	})
}

// fuzzFSM is a fresh FSM with entries applied.
func fuzzFSM(t *testing.T, entries []*raft.Log) *FSM {
	t.Helper()
	f := testFSM(t)
	for _, e := range entries {
		if resp := f.Apply(e); resp != nil {
			if err, ok := resp.(error); ok {
				t.Fatalf("base entry %d (%s): %v", e.Index, structs.MessageType(e.Data[0]), err)
			}
		}
	}
	return f
}

func applyNoPanic(t *testing.T, f *FSM, e *raft.Log) (resp any) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Apply panicked: %v", p)
		}
	}()
	return f.Apply(e)
}
