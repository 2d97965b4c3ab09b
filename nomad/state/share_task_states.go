package state

import (
	"reflect"

	"github.com/drover-sched/drover/structs"
)

// A client's report carries every task state of its alloc, each with the
// task's whole event history, whether or not anything changed: a health
// report after a running one repeats the same states, and a running
// report repeats the events of the pending one before it. Versions of a
// stored alloc live on side by side (in snapshots, and in the event
// stream's buffer, whose alloc events point at the version of their
// entry), so the store keeps the stored version's task states, events
// and map where the report's are equal to them, and only what changed is
// new.
//
// Equality is reflect.DeepEqual, as for the other shared values
// (share_values.go): a field added later makes values differ, never
// wrongly equal. Stored values are never changed, so a later report never
// changes what an earlier version (or snapshot) holds.

// shareTaskStates returns the task states to store for an alloc whose
// client reported states (the store's own copies, ApplyClientUpdate's),
// given those of the stored version (prev): prev itself if every state is
// equal, otherwise a map holding prev's equal states and the new ones,
// names and texts interned.
func shareTaskStates(states, prev map[string]*structs.TaskState) map[string]*structs.TaskState {
	if states == nil {
		return nil
	}
	same := prev != nil && len(states) == len(prev)
	out := make(map[string]*structs.TaskState, len(states))
	for name, ts := range states {
		old, ok := prev[name]
		ts = shareTaskState(ts, old)
		same = same && ok && ts == old
		out[interned.intern(name)] = ts
	}
	if same {
		return prev
	}
	return out
}

// shareTaskState returns old if ts equals it, otherwise ts with the
// events old also has replaced by old's, and the rest interned.
func shareTaskState(ts, old *structs.TaskState) *structs.TaskState {
	if ts == nil {
		return nil
	}
	shared := shareTaskEvents(ts.Events, old)
	if old != nil && shared == len(ts.Events) && len(old.Events) == len(ts.Events) {
		a, b := *ts, *old
		a.Events, b.Events = nil, nil
		if reflect.DeepEqual(a, b) {
			return old
		}
	}
	internString(&ts.State)
	return ts
}

// shareTaskEvents replaces the events of events that old also has by
// old's, interns the others, and returns how many it replaced.
//
// A client appends events and drops the oldest beyond its limit, so the
// events a report has in common with the stored version are a run of
// old's events from where the report's first event is, in order. Looking
// only for that run keeps the work linear in the events, however many a
// report carries.
func shareTaskEvents(events []*structs.TaskEvent, old *structs.TaskState) int {
	start := -1
	if old != nil && len(events) > 0 {
		for j, o := range old.Events {
			if taskEventsEqual(events[0], o) {
				start = j
				break
			}
		}
	}
	shared := 0
	for i, e := range events {
		if j := start + i; start >= 0 && j < len(old.Events) && taskEventsEqual(e, old.Events[j]) {
			events[i] = old.Events[j]
			shared++
			continue
		}
		internTaskEvent(e)
	}
	return shared
}

// taskEventsEqual compares the time and type first: they tell nearly all
// events apart, without reflection.
func taskEventsEqual(a, b *structs.TaskEvent) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Time == b.Time && a.Type == b.Type && reflect.DeepEqual(a, b)
}
