package structs

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// taskEventWire is a TaskEvent as it is encoded: the flat struct it was
// before its rare fields moved to an extra part. Raft logs and snapshots
// written before that hold this shape, Nomad's API clients read it, and
// servers and clients of both kinds exchange it, so its fields, their
// order (JSON writes them in this order) and their types never change; a
// new field is added at the end, as it would have been to the flat struct.
type taskEventWire struct {
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

// toWire fills w with e's fields.
func (e *TaskEvent) toWire(w *taskEventWire) {
	x := e.extra()
	*w = taskEventWire{
		Type: e.Type, Time: e.Time, Message: e.Message, DisplayMessage: e.DisplayMessage,
		Details: e.Details, FailsTask: e.FailsTask,
		RestartReason: x.RestartReason, DriverError: x.DriverError, ExitCode: x.ExitCode,
		Signal: x.Signal, KillTimeout: x.KillTimeout, KillError: x.KillError,
		KillReason: x.KillReason, StartDelay: x.StartDelay, DownloadError: x.DownloadError,
		ValidationError: x.ValidationError, DiskLimit: x.DiskLimit,
		FailedSibling: x.FailedSibling, TaskSignal: x.TaskSignal, DriverMessage: x.DriverMessage,
	}
}

// fromWire sets e to w's fields, with an extra part only if one of its
// fields is set.
func (e *TaskEvent) fromWire(w *taskEventWire) {
	*e = TaskEvent{
		Type: w.Type, Time: w.Time, Message: w.Message, DisplayMessage: w.DisplayMessage,
		Details: w.Details, FailsTask: w.FailsTask,
	}
	x := taskEventExtra{
		RestartReason: w.RestartReason, DriverError: w.DriverError, ExitCode: w.ExitCode,
		Signal: w.Signal, KillTimeout: w.KillTimeout, KillError: w.KillError,
		KillReason: w.KillReason, StartDelay: w.StartDelay, DownloadError: w.DownloadError,
		ValidationError: w.ValidationError, DiskLimit: w.DiskLimit,
		FailedSibling: w.FailedSibling, TaskSignal: w.TaskSignal, DriverMessage: w.DriverMessage,
	}
	if x != (taskEventExtra{}) {
		// A copy, so that x itself stays on the stack: taking its
		// address would make every decoded event allocate one.
		p := new(taskEventExtra)
		*p = x
		e.taskEventExtra = p
	}
}

// wires recycles the wire structs msgpack encodes from and decodes into:
// a server decodes every event of every alloc update it applies, and a
// wire struct made for each would be 256 bytes of garbage per event. The
// decoder's cost estimate (helper/rpcx) counts what a value keeps, which
// a pooled struct is not.
var wires = sync.Pool{New: func() any { return new(taskEventWire) }}

// CodecEncodeSelf writes e in msgpack as the flat struct.
func (e *TaskEvent) CodecEncodeSelf(enc *codec.Encoder) {
	w := wires.Get().(*taskEventWire)
	e.toWire(w)
	enc.MustEncode(w)
	*w = taskEventWire{}
	wires.Put(w)
}

// decodeDetails: decoding into an event merges the message's Details into
// the map the event has, as decoding into the flat struct did; but stored
// events may share one map (the state store keeps one empty map for them
// all), so the decoders merge into a copy and the event takes the copy
// only once the decode succeeded. A failed decode leaves e's map as it
// was.

// CodecDecodeSelf reads the flat struct's msgpack into e. Fields the
// message leaves out keep the values e had, as they did when the flat
// struct was decoded into.
func (e *TaskEvent) CodecDecodeSelf(dec *codec.Decoder) {
	w := wires.Get().(*taskEventWire)
	e.toWire(w)
	w.Details = maps.Clone(w.Details) // see decodeDetails
	dec.MustDecode(w)
	e.fromWire(w)
	*w = taskEventWire{}
	wires.Put(w)
}

// MarshalJSON writes e as the flat struct: every field, in its order.
func (e TaskEvent) MarshalJSON() ([]byte, error) {
	var w taskEventWire
	e.toWire(&w)
	return json.Marshal(&w)
}

// String shows every field by name, the rare ones too, as the flat
// struct printed with %+v (without it an event would print its extra
// part as an address, in logs and in test failures).
func (e TaskEvent) String() string {
	var w taskEventWire
	e.toWire(&w)
	return fmt.Sprintf("%+v", w)
}

// UnmarshalJSON reads the flat struct's JSON into e; fields the JSON
// leaves out keep their values, as encoding/json does for a struct. An
// error names the field as TaskEvent's, not the wire struct's.
func (e *TaskEvent) UnmarshalJSON(b []byte) error {
	var w taskEventWire
	e.toWire(&w)
	w.Details = maps.Clone(w.Details) // see decodeDetails
	if err := json.Unmarshal(b, &w); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			te.Struct = "TaskEvent"
		}
		return err
	}
	e.fromWire(&w)
	return nil
}
