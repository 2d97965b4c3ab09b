package fsm

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/helper/fuzzseed"
	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/nomad/raftlog"
	"github.com/drover-sched/drover/structs"
)

// The finding: an entry the FSM could not decode made the server panic,
// and since the entry stays in the log, on every start again. No entry's
// content may panic the FSM: each is refused with an error, the same way
// on every server, and changes nothing.
func TestFSMRefusesPoisonEntriesWithoutPanicking(t *testing.T) {
	nilJob, err := raftlog.Encode(structs.JobRegisterRequestType, &structs.JobRegisterRequest{})
	if err != nil {
		t.Fatal(err)
	}
	wrongShape, err := rpcx.Encode(map[string]any{"Job": []any{1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	nilNode, err := raftlog.Encode(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"garbage after a known type", append([]byte{byte(structs.JobRegisterRequestType)}, 0xc1, 0xff, 0x00), "(JobRegister) could not be applied"},
		{"a body of the wrong shape", append([]byte{byte(structs.JobRegisterRequestType)}, wrongShape...), "could not be applied"},
		{"a truncated body", nilJob[:len(nilJob)/2], "could not be applied"},
		{"a register without its job", nilJob, ""},
		{"a node register without its node", nilNode, ""},
		{"an unknown type", []byte{99, 0x80}, "unknown message type 99"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i := 0; i < 2; i++ { // every server, every start: the same answer
				f := testFSM(t)
				before := dumpState(t, f.State())
				var resp any
				func() {
					defer func() {
						if p := recover(); p != nil {
							t.Fatalf("the FSM panicked: %v", p)
						}
					}()
					resp = f.Apply(&raft.Log{Index: 7, Type: raft.LogCommand, Data: c.data})
				}()
				err, _ := resp.(error)
				if err == nil {
					t.Fatalf("want an error for a poison entry, got %v", resp)
				}
				if c.want != "" && !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %q should mention %q", err, c.want)
				}
				if c.want != "" && !strings.Contains(err.Error(), "raft entry 7") {
					t.Fatalf("error %q should name the entry", err)
				}
				if !structs.DeepEqual(before, dumpState(t, f.State())) {
					t.Fatal("a refused entry must change nothing")
				}
			}
		})
	}
}

func TestFSMRestoreRefusesAMalformedSnapshotWithoutPanicking(t *testing.T) {
	var buf bytes.Buffer
	enc := func(v any) {
		b, err := rpcx.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
	}
	enc(&snapshotHeader{Version: snapshotVersion, LatestIndex: 5})
	// A job record that is no job at all, then a nil alloc.
	enc(recJob)
	enc([]any{"not", "a", "job"})
	f := testFSM(t)
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("restore panicked: %v", p)
			}
		}()
		return f.Restore(io.NopCloser(bytes.NewReader(buf.Bytes())))
	}()
	if err == nil {
		t.Fatal("a malformed snapshot must be refused")
	}
}

// Bug found while fuzzing restore (FuzzFSMRestore): a snapshot was read
// with a bare go-msgpack stream decoder, which trusts length prefixes, so
// 42 bytes claiming an allocation with sixteen million AllocStates made a
// server allocate 128 MiB before it found the claim empty, and a slice of
// structs claimed the same way costs gigabytes. A snapshot may come from a
// peer (a leader installing one): each record is now framed and checked
// first, as an RPC message is.
func TestFSMRestoreRefusesLengthsTheSnapshotDoesNotHold(t *testing.T) {
	hdr, err := rpcx.Encode(&snapshotHeader{Version: snapshotVersion, LatestIndex: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		field string
		claim []byte
	}{
		{"AllocStates", []byte{0xdd, 0x00, 0xff, 0xff, 0xff}},        // 16M pointers
		{"Name", []byte{0xdb, 0x00, 0xff, 0xff, 0xff}},               // a 16 MiB string
		{"AllocatedResources", []byte{0xdf, 0x00, 0xff, 0xff, 0xff}}, // 16M entries
	} {
		t.Run(tc.field, func(t *testing.T) {
			b := append(append([]byte{}, hdr...), byte(recAlloc), 0x81, 0xa0|byte(len(tc.field)))
			b = append(append(b, tc.field...), tc.claim...)
			f := testFSM(t)
			before := fuzzseed.AllocatedBytes()
			err := f.Restore(io.NopCloser(bytes.NewReader(b)))
			if err == nil {
				t.Fatal("a snapshot whose record claims bytes it does not hold was restored")
			}
			if grew := fuzzseed.AllocatedBytes() - before; grew > 8<<20 {
				t.Fatalf("refusing a %d-byte snapshot allocated %d MiB", len(b), grew>>20)
			}
		})
	}
}
