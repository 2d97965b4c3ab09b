package structs

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// TestTaskEventIsSmall: an event of the common fields fits the 80-byte
// size class (the flat struct took 256); a field added to TaskEvent
// rather than to its extra part must be weighed against this.
func TestTaskEventIsSmall(t *testing.T) {
	if size := unsafe.Sizeof(TaskEvent{}); size > 80 {
		t.Fatalf("TaskEvent is %d bytes, want at most 80", size)
	}
	// What the heap really holds per event, common fields set, measured
	// over many so that the size class shows.
	const n = 10_000
	events := make([]*TaskEvent, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range events {
		events[i] = &TaskEvent{Type: TaskStarted, Time: int64(i), DisplayMessage: "Task started by client"}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 96 {
		t.Fatalf("an event of the common fields allocates %d bytes, want at most 96", per)
	}
	runtime.KeepAlive(events)
}

// TestTaskEventGettersOfAnEventWithoutExtras: every getter of an event
// that sets no rare field, and of a nil event, returns the zero value.
func TestTaskEventGettersOfAnEventWithoutExtras(t *testing.T) {
	for name, e := range map[string]*TaskEvent{"an empty event": {}, "a nil event": nil} {
		got := []any{e.RestartReason(), e.DriverError(), e.ExitCode(), e.Signal(), e.KillTimeout(),
			e.KillError(), e.KillReason(), e.StartDelay(), e.DownloadError(), e.ValidationError(),
			e.DiskLimit(), e.FailedSibling(), e.TaskSignal(), e.DriverMessage()}
		for i, v := range got {
			if !reflect.ValueOf(v).IsZero() {
				t.Errorf("%s: getter %d reads %v, want zero", name, i, v)
			}
		}
	}
}

// TestTaskEventSettersAndEquality: setters set what the getters read;
// an event whose rare fields are all zero again has no extra part, so it
// is reflect.DeepEqual (the state store's test for a repeated event) to
// one that never had them.
func TestTaskEventSettersAndEquality(t *testing.T) {
	e := &TaskEvent{Type: TaskKilling}
	e.SetKillTimeout(5 * time.Second).SetKillReason("stopped by user")
	if e.KillTimeout() != 5*time.Second || e.KillReason() != "stopped by user" {
		t.Fatalf("read back %v %q", e.KillTimeout(), e.KillReason())
	}
	e.SetKillTimeout(0).SetKillReason("")
	if e.taskEventExtra != nil {
		t.Fatalf("an event with every rare field zero keeps an extra part: %+v", *e.taskEventExtra)
	}
	if !reflect.DeepEqual(e, &TaskEvent{Type: TaskKilling}) {
		t.Fatal("an event whose rare fields were set and cleared is not equal to one that never had them")
	}
	if (&TaskEvent{}).SetExitCode(0).taskEventExtra != nil {
		t.Fatal("setting a rare field to zero made an extra part")
	}
}

// TestTaskEventSettersNeverChangeASharedExtra: events that share an extra
// part (a shallow copy, as a stored version and its successor may) do
// not see each other's changes, and Copy shares nothing.
func TestTaskEventSettersNeverChangeASharedExtra(t *testing.T) {
	e := (&TaskEvent{Type: TaskRestarting, Details: map[string]string{"k": "v"}}).SetRestartReason("first").SetStartDelay(7)
	shallow := *e
	shallow.SetRestartReason("second")
	if e.RestartReason() != "first" || shallow.RestartReason() != "second" || shallow.StartDelay() != 7 {
		t.Fatalf("shared extra changed: original %q, copy %q (delay %d)", e.RestartReason(), shallow.RestartReason(), shallow.StartDelay())
	}

	c := e.Copy()
	if !reflect.DeepEqual(c, e) {
		t.Fatalf("copy %+v differs from %+v", flatFromEvent(c), flatFromEvent(e))
	}
	if c.taskEventExtra == e.taskEventExtra {
		t.Fatal("Copy shares the extra part")
	}
	c.Details["k"] = "changed"
	if e.Details["k"] != "v" {
		t.Fatal("Copy shares Details")
	}
	if (*TaskEvent)(nil).Copy() != nil {
		t.Fatal("a nil event copied to non-nil")
	}
}

// TestTaskEventShareStrings: every text field, common and rare, goes
// through share, and the extra part is replaced rather than changed.
func TestTaskEventShareStrings(t *testing.T) {
	e := newEventFromFlat(flatEventCases()["every field set"])
	before := e.taskEventExtra
	old := *before
	e.ShareStrings(strings.ToUpper)
	if *before != old {
		t.Fatal("ShareStrings changed the extra part in place")
	}
	f := flatFromEvent(e)
	for name, s := range map[string]string{
		"Type": f.Type, "Message": f.Message, "DisplayMessage": f.DisplayMessage, "RestartReason": f.RestartReason,
		"DriverError": f.DriverError, "KillError": f.KillError, "KillReason": f.KillReason,
		"DownloadError": f.DownloadError, "ValidationError": f.ValidationError, "FailedSibling": f.FailedSibling,
		"TaskSignal": f.TaskSignal, "DriverMessage": f.DriverMessage,
	} {
		if s != strings.ToUpper(s) || s == "" {
			t.Errorf("%s = %q did not go through share", name, s)
		}
	}
	if f.ExitCode != 3 || f.KillTimeout != 5*time.Second {
		t.Fatalf("ShareStrings changed numbers: %+v", f)
	}
	plain := &TaskEvent{Type: "x"}
	plain.ShareStrings(strings.ToUpper)
	if plain.Type != "X" || plain.taskEventExtra != nil {
		t.Fatalf("an event without extras: %+v", plain)
	}
	(*TaskEvent)(nil).ShareStrings(strings.ToUpper)
}

// TestTaskEventPrintsEveryField: %v shows the rare fields by name and
// value, not the extra part's address.
func TestTaskEventPrintsEveryField(t *testing.T) {
	e := (&TaskEvent{Type: TaskKilling}).SetKillReason("stopped").SetKillTimeout(time.Second)
	got := fmt.Sprintf("%v", e)
	for _, want := range []string{"Type:Killing", "KillReason:stopped", "KillTimeout:1s", "ExitCode:0"} {
		if !strings.Contains(got, want) {
			t.Fatalf("%q does not show %q", got, want)
		}
	}
}

// TestEveryRareFieldHasAGetterAndASetter: each field of the extra part is
// shadowed by a getter of its name (so no code outside this package can
// read it through a nil pointer) and has a setter.
func TestEveryRareFieldHasAGetterAndASetter(t *testing.T) {
	ev := reflect.TypeFor[*TaskEvent]()
	extra := reflect.TypeFor[taskEventExtra]()
	for i := range extra.NumField() {
		f := extra.Field(i)
		get, ok := ev.MethodByName(f.Name)
		if !ok || get.Type.NumOut() != 1 || get.Type.Out(0) != f.Type {
			t.Errorf("no getter %s() %s", f.Name, f.Type)
		}
		set, ok := ev.MethodByName("Set" + f.Name)
		if !ok || set.Type.NumIn() != 2 || set.Type.In(1) != f.Type {
			t.Errorf("no setter Set%s(%s)", f.Name, f.Type)
		}
	}
	if extra.NumField()+6 != reflect.TypeFor[taskEventWire]().NumField() {
		t.Errorf("the extra part's %d fields and the 6 common ones are not the wire struct's %d", extra.NumField(), reflect.TypeFor[taskEventWire]().NumField())
	}
}
