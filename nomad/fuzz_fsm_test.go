package nomad

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/helper/fuzzseed"
	"github.com/drover-sched/drover/nomad/fsm"
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

// restoreAllocBudget bounds what restoring a snapshot of n bytes may
// allocate: the state store's tables and the decoder's buffers, and the
// records, which take about what they take in the snapshot.
func restoreAllocBudget(n int) uint64 {
	return 2<<20 + 64*uint64(n)
}

// FuzzFSMRestore restores arbitrary bytes as a snapshot, as a server does
// at start and when the leader installs one on it. Whatever the bytes:
//
//   - Restore never panics and allocates at most restoreAllocBudget,
//     whatever a length in them claims;
//   - a snapshot it refuses leaves the FSM's state as it was;
//   - one it accepts is a fixed point: snapshotted and restored again, the
//     state is the same.
func FuzzFSMRestore(f *testing.F) {
	all := buildLog(f).entries
	full := testFSMFor(f)
	for _, e := range all[:len(all)-4] {
		full.Apply(e)
	}
	snapshot := persistFSM(f, full)
	f.Add(snapshot)
	f.Add(snapshot[:len(snapshot)/2])
	f.Add(persistFSM(f, testFSMFor(f)))

	f.Fuzz(func(t *testing.T, data []byte) {
		fsm := testFSM(t)
		before := dumpState(t, fsm.State())
		start := fuzzseed.AllocatedBytes()
		err := func() (err error) {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("Restore panicked: %v", p)
				}
			}()
			return fsm.Restore(io.NopCloser(bytes.NewReader(data)))
		}()
		if used, budget := fuzzseed.AllocatedBytes()-start, restoreAllocBudget(len(data)); used > budget {
			t.Fatalf("restoring %d bytes allocated %d KiB, more than the %d KiB budget", len(data), used>>10, budget>>10)
		}
		if err != nil {
			if d := fuzzseed.Diff(before, dumpState(t, fsm.State())); d != "" {
				t.Fatalf("a refused snapshot (%v) changed the state: %s", err, d)
			}
			return
		}
		restored := dumpState(t, fsm.State())
		again := testFSM(t)
		if err := again.Restore(io.NopCloser(bytes.NewReader(persistFSM(t, fsm)))); err != nil {
			t.Fatalf("a restored state cannot be snapshotted and restored again: %v", err)
		}
		if d := fuzzseed.Diff(restored, dumpState(t, again.State())); d != "" {
			t.Fatalf("a restored state changed when snapshotted and restored again: %s", d)
		}
	})
}

func persistFSM(tb testing.TB, f *fsm.FSM) []byte {
	tb.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		tb.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		tb.Fatal(err)
	}
	return sink.Bytes()
}

func testFSMFor(tb testing.TB) *fsm.FSM {
	tb.Helper()
	f, err := fsm.New(hclog.NewNullLogger(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// fuzzFSM is a fresh FSM with entries applied.
func fuzzFSM(t *testing.T, entries []*raft.Log) *fsm.FSM {
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

func applyNoPanic(t *testing.T, f *fsm.FSM, e *raft.Log) (resp any) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Apply panicked: %v", p)
		}
	}()
	return f.Apply(e)
}
