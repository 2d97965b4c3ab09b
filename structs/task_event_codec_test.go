package structs

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	nomadapi "github.com/hashicorp/nomad/api"
	"pgregory.net/rapid"

	"github.com/drover-sched/drover/helper/fuzzseed"
	"github.com/drover-sched/drover/helper/rpcx"
)

// flatTaskEvent is TaskEvent as it was before its rare fields moved to an
// extra part: the shape raft logs, snapshots, RPC peers and HTTP clients
// hold. Its encodings are what TaskEvent's must stay, byte for byte. It is
// a copy on purpose, not taskEventWire: a change to the wire struct must
// fail these tests.
type flatTaskEvent struct {
	Type            string
	Time            int64
	Message         string
	DisplayMessage  string
	Details         map[string]string
	FailsTask       bool
	RestartReason   string
	DriverError     string
	ExitCode        int
	Signal          int
	KillTimeout     time.Duration
	KillError       string
	KillReason      string
	StartDelay      int64
	DownloadError   string
	ValidationError string
	DiskLimit       int64
	FailedSibling   string
	TaskSignal      string
	DriverMessage   string
}

// flatTaskState is TaskState holding flat events.
type flatTaskState struct {
	State       string
	Failed      bool
	Restarts    uint64
	LastRestart time.Time
	StartedAt   time.Time
	FinishedAt  time.Time
	Events      []*flatTaskEvent
}

// newEventFromFlat builds the TaskEvent holding what f holds, through
// the setters.
func newEventFromFlat(f *flatTaskEvent) *TaskEvent {
	e := &TaskEvent{Type: f.Type, Time: f.Time, Message: f.Message, DisplayMessage: f.DisplayMessage,
		Details: f.Details, FailsTask: f.FailsTask}
	return e.SetRestartReason(f.RestartReason).SetDriverError(f.DriverError).SetExitCode(f.ExitCode).
		SetSignal(f.Signal).SetKillTimeout(f.KillTimeout).SetKillError(f.KillError).
		SetKillReason(f.KillReason).SetStartDelay(f.StartDelay).SetDownloadError(f.DownloadError).
		SetValidationError(f.ValidationError).SetDiskLimit(f.DiskLimit).SetFailedSibling(f.FailedSibling).
		SetTaskSignal(f.TaskSignal).SetDriverMessage(f.DriverMessage)
}

// flatFromEvent reads e back through the getters.
func flatFromEvent(e *TaskEvent) *flatTaskEvent {
	return &flatTaskEvent{Type: e.Type, Time: e.Time, Message: e.Message, DisplayMessage: e.DisplayMessage,
		Details: e.Details, FailsTask: e.FailsTask, RestartReason: e.RestartReason(), DriverError: e.DriverError(),
		ExitCode: e.ExitCode(), Signal: e.Signal(), KillTimeout: e.KillTimeout(), KillError: e.KillError(),
		KillReason: e.KillReason(), StartDelay: e.StartDelay(), DownloadError: e.DownloadError(),
		ValidationError: e.ValidationError(), DiskLimit: e.DiskLimit(), FailedSibling: e.FailedSibling(),
		TaskSignal: e.TaskSignal(), DriverMessage: e.DriverMessage()}
}

// flatEventCases are the events the byte-for-byte tests check: every
// field set, only the common ones (as most events are), and none. Details
// hold at most one entry: the codecs write a map's entries in Go's map
// order, so two encodings of a larger map need not agree, flat or not.
func flatEventCases() map[string]*flatTaskEvent {
	return map[string]*flatTaskEvent{
		"every field set": {
			Type: TaskTerminated, Time: 1_700_000_000_123_456_789, Message: "exit status 3",
			DisplayMessage: "Exit Code: 3, Signal: 9", Details: map[string]string{"exit_code": "3"},
			FailsTask: true, RestartReason: "Restart within policy", DriverError: "driver broke",
			ExitCode: 3, Signal: 9, KillTimeout: 5 * time.Second, KillError: "kill failed",
			KillReason: "alloc stopped", StartDelay: int64(15 * time.Second), DownloadError: "404 <not found> & more",
			ValidationError: "bad task", DiskLimit: 300, FailedSibling: "sidecar", TaskSignal: "SIGHUP",
			DriverMessage: "pulling image",
		},
		"only the common fields set": {
			Type: TaskSetup, Time: 1_700_000_000_000_000_000, Message: "Building Task Directory",
			DisplayMessage: "Building Task Directory", Details: map[string]string{},
		},
		"a negative exit code only": {Type: TaskTerminated, ExitCode: -1},
		"nothing set":               {},
	}
}

// TestTaskEventEncodesAsTheFlatStruct: msgpack (the RPC and raft handle)
// and JSON (the HTTP API, plain and pretty) write exactly the flat
// struct's bytes, alone, in a task state, and inside an allocation.
func TestTaskEventEncodesAsTheFlatStruct(t *testing.T) {
	for name, flat := range flatEventCases() {
		t.Run(name, func(t *testing.T) {
			ev := newEventFromFlat(flat)
			if got, want := mustRPCEncode(t, ev), mustRPCEncode(t, flat); !bytes.Equal(got, want) {
				t.Fatalf("msgpack differs from the flat struct's:\n got %x\nwant %x", got, want)
			}
			if got, want := mustJSON(t, ev), mustJSON(t, flat); !bytes.Equal(got, want) {
				t.Fatalf("JSON differs from the flat struct's:\n got %s\nwant %s", got, want)
			}
			at := time.Unix(1_700_000_000, 5).UTC()
			state := &TaskState{State: TaskStateDead, Failed: true, Restarts: 2, StartedAt: at,
				Events: []*TaskEvent{ev, nil, ev}}
			flatState := &flatTaskState{State: TaskStateDead, Failed: true, Restarts: 2, StartedAt: at,
				Events: []*flatTaskEvent{flat, nil, flat}}
			flatBytes := mustRPCEncode(t, flatState)
			if got := mustRPCEncode(t, state); !bytes.Equal(got, flatBytes) {
				t.Fatalf("a task state's msgpack differs from the flat one's:\n got %x\nwant %x", got, flatBytes)
			}
			var back TaskState
			if err := rpcx.Decode(flatBytes, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(&back, state) {
				t.Fatalf("the flat task state decoded into %+v, want %+v", back, state)
			}
			// Inside an allocation, as Node.UpdateAlloc, the raft log and
			// snapshots carry it: the task state's bytes are there whole.
			alloc := &Allocation{ID: "a1", TaskStates: map[string]*TaskState{"web": state}}
			if got := mustRPCEncode(t, alloc); !bytes.Contains(got, flatBytes) {
				t.Fatalf("an allocation's msgpack does not hold the flat task state's bytes:\n got %x\nwant within it %x", got, flatBytes)
			}
			// A snapshot streams through an io.Writer encoder, which
			// buffers and flushes: the event's nested encode must not
			// disturb it.
			var stream, flatStream bytes.Buffer
			for _, w := range []struct {
				buf *bytes.Buffer
				v   any
			}{{&stream, alloc}, {&stream, state}, {&flatStream, flatState}} {
				if err := codec.NewEncoder(w.buf, rpcx.MsgpackHandle).Encode(w.v); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.HasSuffix(stream.Bytes(), flatBytes) || !bytes.Equal(flatStream.Bytes(), flatBytes) ||
				!bytes.Equal(stream.Bytes()[:stream.Len()-len(flatBytes)], mustRPCEncode(t, alloc)) {
				t.Fatalf("a streamed encoding differs from the flat one's:\n got %x\nwant %x", stream.Bytes(), flatBytes)
			}
			if got, want := mustJSON(t, state), mustJSON(t, flatState); !bytes.Equal(got, want) {
				t.Fatalf("a task state's JSON differs from the flat one's:\n got %s\nwant %s", got, want)
			}
			if got, want := prettyJSON(t, state), prettyJSON(t, flatState); got != want {
				t.Fatalf("pretty JSON differs from the flat one's:\n got %s\nwant %s", got, want)
			}
		})
	}
}

// TestTaskEventDecodesTheFlatStruct: bytes the flat struct wrote (old log
// entries, snapshots, peers) decode into the event that holds the same,
// in msgpack and in JSON, inside an allocation too, and decode again to
// the same bytes.
func TestTaskEventDecodesTheFlatStruct(t *testing.T) {
	for name, flat := range flatEventCases() {
		t.Run(name, func(t *testing.T) {
			want := newEventFromFlat(flat)
			b := mustRPCEncode(t, flat)
			var got TaskEvent
			if err := rpcx.Decode(b, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(&got, want) {
				t.Fatalf("msgpack decoded into %+v, want %+v", flatFromEvent(&got), flat)
			}
			if again := mustRPCEncode(t, &got); !bytes.Equal(again, b) {
				t.Fatalf("re-encoded msgpack differs:\n got %x\nwant %x", again, b)
			}
			var fromJSON TaskEvent
			if err := json.Unmarshal(mustJSON(t, flat), &fromJSON); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(&fromJSON, want) {
				t.Fatalf("JSON decoded into %+v, want %+v", flatFromEvent(&fromJSON), flat)
			}

			var alloc Allocation
			flatAlloc := map[string]any{"ID": "a1", "TaskStates": map[string]*flatTaskState{"web": {Events: []*flatTaskEvent{flat}}}}
			if err := rpcx.Decode(mustRPCEncode(t, flatAlloc), &alloc); err != nil {
				t.Fatal(err)
			}
			if got := alloc.TaskStates["web"].Events; len(got) != 1 || !reflect.DeepEqual(got[0], want) {
				t.Fatalf("an allocation's event decoded into %+v, want %+v", got, flat)
			}
		})
	}
}

// TestTaskEventRoundTripsEveryFlatValue: for any flat event, its bytes
// decode into a TaskEvent that encodes to the same bytes, holds the same
// values, and equals the event the setters build; and the same in JSON.
func TestTaskEventRoundTripsEveryFlatValue(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		flat := fuzzseed.Value(t, reflect.TypeFor[flatTaskEvent]()).Addr().Interface().(*flatTaskEvent)
		for k := range flat.Details {
			if len(flat.Details) > 1 {
				delete(flat.Details, k) // see flatEventCases
			}
		}
		want := newEventFromFlat(flat)

		b, err := rpcx.Encode(flat)
		if err != nil {
			t.Fatal(err)
		}
		var got TaskEvent
		if err := rpcx.Decode(b, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&got, want) || !reflect.DeepEqual(flatFromEvent(&got), flat) {
			t.Fatalf("msgpack decoded into %+v, want %+v", flatFromEvent(&got), flat)
		}
		if again, err := rpcx.Encode(&got); err != nil || !bytes.Equal(again, b) {
			t.Fatalf("re-encoded msgpack differs (%v):\n got %x\nwant %x", err, again, b)
		}

		j, err := json.Marshal(flat)
		if err != nil {
			t.Fatal(err)
		}
		var fromJSON TaskEvent
		if err := json.Unmarshal(j, &fromJSON); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(flatFromEvent(&fromJSON), flat) {
			t.Fatalf("JSON decoded into %+v, want %+v", flatFromEvent(&fromJSON), flat)
		}
		if again, err := json.Marshal(&fromJSON); err != nil || !bytes.Equal(again, j) {
			t.Fatalf("re-encoded JSON differs (%v):\n got %s\nwant %s", err, again, j)
		}
	})
}

// TestTaskEventDecodingKeepsFieldsTheMessageLacks: decoding into an event
// that holds values keeps those the message leaves out, in msgpack and
// JSON, as decoding into the flat struct did.
func TestTaskEventDecodingKeepsFieldsTheMessageLacks(t *testing.T) {
	partial := map[string]any{"ExitCode": 7, "Message": "new"}
	start := func() (*TaskEvent, *flatTaskEvent) {
		f := &flatTaskEvent{Type: TaskTerminated, Message: "old", KillReason: "stopped", Signal: 9}
		return newEventFromFlat(f), f
	}

	ev, flat := start()
	b := mustRPCEncode(t, partial)
	if err := rpcx.Decode(b, ev); err != nil {
		t.Fatal(err)
	}
	if err := rpcx.Decode(b, flat); err != nil {
		t.Fatal(err)
	}
	if got := flatFromEvent(ev); !reflect.DeepEqual(got, flat) {
		t.Fatalf("msgpack: decoded into %+v, the flat struct into %+v", got, flat)
	}

	ev, flat = start()
	j := mustJSON(t, partial)
	if err := json.Unmarshal(j, ev); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(j, flat); err != nil {
		t.Fatal(err)
	}
	if got := flatFromEvent(ev); !reflect.DeepEqual(got, flat) {
		t.Fatalf("JSON: decoded into %+v, the flat struct into %+v", got, flat)
	}
}

// TestTaskEventJSONErrorNamesTheField: a field of the wrong type is named
// as TaskEvent's field, and the event is left as it was.
func TestTaskEventJSONErrorNamesTheField(t *testing.T) {
	ev := &TaskEvent{Type: TaskStarted, Message: "kept"}
	err := json.Unmarshal([]byte(`{"Message":"changed","ExitCode":"three"}`), ev)
	if err == nil || !strings.Contains(err.Error(), "TaskEvent.ExitCode") || !strings.Contains(err.Error(), "int") {
		t.Fatalf("error %v, want one naming TaskEvent.ExitCode and its type", err)
	}
	if ev.Message != "kept" || ev.ExitCode() != 0 {
		t.Fatalf("a rejected decode changed the event: %+v", flatFromEvent(ev))
	}
}

// TestNomadClientReadsTaskEventJSON: Nomad's own API client reads every
// field of an event from Drover's JSON.
func TestNomadClientReadsTaskEventJSON(t *testing.T) {
	flat := flatEventCases()["every field set"]
	var got nomadapi.TaskEvent
	if err := json.Unmarshal(mustJSON(t, newEventFromFlat(flat)), &got); err != nil {
		t.Fatal(err)
	}
	want := nomadapi.TaskEvent{
		Type: flat.Type, Time: flat.Time, Message: flat.Message, DisplayMessage: flat.DisplayMessage,
		Details: flat.Details, FailsTask: flat.FailsTask, RestartReason: flat.RestartReason,
		DriverError: flat.DriverError, ExitCode: flat.ExitCode, Signal: flat.Signal,
		KillTimeout: flat.KillTimeout, KillError: flat.KillError, KillReason: flat.KillReason,
		StartDelay: flat.StartDelay, DownloadError: flat.DownloadError, ValidationError: flat.ValidationError,
		DiskLimit: flat.DiskLimit, FailedSibling: flat.FailedSibling, TaskSignal: flat.TaskSignal,
		DriverMessage: flat.DriverMessage,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Nomad's client read %+v, want %+v", got, want)
	}
}

func mustRPCEncode(t testing.TB, v any) []byte {
	t.Helper()
	b, err := rpcx.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// prettyJSON encodes v as the HTTP API does for ?pretty.
func prettyJSON(t testing.TB, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "    ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// BenchmarkTaskStateMsgpack measures what the conversion through the wire
// struct costs a task state of three events (Received, Task Setup,
// Started, as a running task reports them), encoded and decoded with the
// RPC and raft handle, against the flat struct's.
func BenchmarkTaskStateMsgpack(b *testing.B) {
	at := time.Unix(1_700_000_000, 0).UTC()
	flat := &flatTaskState{State: TaskStateRunning, StartedAt: at, Events: []*flatTaskEvent{
		{Type: TaskReceived, Time: at.UnixNano(), DisplayMessage: "Task received by client", Details: map[string]string{}},
		{Type: TaskSetup, Time: at.UnixNano(), Message: "Building Task Directory", DisplayMessage: "Building Task Directory", Details: map[string]string{}},
		{Type: TaskStarted, Time: at.UnixNano(), DisplayMessage: "Task started by client", Details: map[string]string{}},
	}}
	state := &TaskState{State: flat.State, StartedAt: at}
	for _, f := range flat.Events {
		state.Events = append(state.Events, newEventFromFlat(f))
	}
	for _, c := range []struct {
		name string
		v    any
		out  func() any
	}{
		{"flat", flat, func() any { return new(flatTaskState) }},
		{"compact", state, func() any { return new(TaskState) }},
	} {
		b.Run("encode/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := rpcx.Encode(c.v); err != nil {
					b.Fatal(err)
				}
			}
		})
		buf := mustRPCEncode(b, c.v)
		b.Run("decode/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := rpcx.Decode(buf, c.out()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestTaskEventMsgpackRefusesAWrongType: a field of the wrong type in a
// message is an error, not a crash, and leaves the event as it was; a
// later decode is unaffected.
func TestTaskEventMsgpackRefusesAWrongType(t *testing.T) {
	ev := (&TaskEvent{Type: TaskStarted, Message: "kept"}).SetExitCode(2)
	bad := mustRPCEncode(t, map[string]any{"Message": "changed", "Time": "not a number"})
	if err := rpcx.Decode(bad, ev); err == nil {
		t.Fatal("a string for Time decoded without an error")
	}
	if ev.Message != "kept" || ev.ExitCode() != 2 {
		t.Fatalf("a refused decode changed the event: %v", ev)
	}
	var fresh TaskEvent
	if err := rpcx.Decode(mustRPCEncode(t, map[string]any{"Type": TaskKilled}), &fresh); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&fresh, &TaskEvent{Type: TaskKilled}) {
		t.Fatalf("a decode after a refused one read %v", &fresh)
	}
}

// Decoding into an event whose Details map is shared (the state store
// keeps one empty map for every stored event without details) merges into
// a copy, so the other holders of the map never see the message's keys;
// the event itself ends with the merge, as the flat struct did.
func TestTaskEventDecodingNeverWritesIntoItsDetailsMap(t *testing.T) {
	msg := map[string]any{"Details": map[string]string{"k": "v"}}
	for name, decode := range map[string]func(b []byte, ev *TaskEvent) error{
		"msgpack": func(b []byte, ev *TaskEvent) error { return rpcx.Decode(b, ev) },
		"JSON":    func(b []byte, ev *TaskEvent) error { return json.Unmarshal(b, ev) },
	} {
		shared := map[string]string{"old": "x"}
		ev := &TaskEvent{Type: TaskStarted, Details: shared}
		b := mustRPCEncode(t, msg)
		if name == "JSON" {
			b = mustJSON(t, msg)
		}
		if err := decode(b, ev); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(shared) != 1 || shared["old"] != "x" {
			t.Fatalf("%s: decoding wrote into the event's map: %v", name, shared)
		}
		if want := map[string]string{"old": "x", "k": "v"}; !reflect.DeepEqual(ev.Details, want) {
			t.Fatalf("%s: Details = %v, want the merge %v", name, ev.Details, want)
		}
	}
}
