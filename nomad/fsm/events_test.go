package fsm

import (
	"testing"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// TestFSMEventsKeepNoRoomForChangesWithoutEvents: the buffer holds each
// entry's events for thousands of entries, so their slice is no longer
// than the events, although the entry also changed the index table.
func TestFSMEventsKeepNoRoomForChangesWithoutEvents(t *testing.T) {
	n := &structs.Node{ID: "n1", Name: "n1"}
	changes := memdb.Changes{
		{Table: "index", After: &state.IndexEntry{Key: state.TableNodes, Value: 7}},
		{Table: state.TableNodes, After: n},
		{Table: "index", After: &state.IndexEntry{Key: state.TableEvals, Value: 7}},
	}
	events, _ := eventsFromChanges(structs.NodeRegisterRequestType, 7, changes)
	if len(events) != 1 || events[0].Key != "n1" || events[0].Type != structs.TypeNodeRegistration {
		t.Fatalf("events = %+v, want one NodeRegistration of n1", events)
	}
	if cap(events) != len(events) {
		t.Errorf("the events' slice has room for %d, holding %d", cap(events), len(events))
	}
}
