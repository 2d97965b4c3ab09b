package state

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// TestStoredEventsShareEmptyDetailsAndRareTexts: events as the task
// runner reports them (an empty Details map each) are stored with one
// shared empty map, which still encodes as an empty map, not null; an
// event with details keeps them; the texts of the rare fields are shared
// like the common ones; and what is stored equals what was reported.
func TestStoredEventsShareEmptyDetailsAndRareTexts(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 1, testJob("web"))
	in := []*structs.Allocation{heapBenchAlloc(job, "eval-1", 0, "node-1"), heapBenchAlloc(job, "eval-1", 1, "node-1")}
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertAllocs(in) }))

	at := time.Unix(1_700_000_000, 0)
	report := func(id string) *structs.Allocation {
		a := heapBenchReportDetails(id, structs.AllocClientStatusRunning, at, func() map[string]string { return map[string]string{} })
		ts := a.TaskStates["web"]
		killing := &structs.TaskEvent{Type: structs.TaskKilling, Time: at.UnixNano() + 1, Details: map[string]string{"kill_timeout": "5s"}}
		killing.SetKillReason(strings.Clone("stopped by the operator")).SetKillTimeout(5 * time.Second)
		ts.Events = append(ts.Events, killing)
		return decoded(a)
	}
	reports := []*structs.Allocation{report(in[0].ID), report(in[1].ID)}
	want := []*structs.Allocation{reports[0].Copy(), reports[1].Copy()}
	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.UpdateAllocsFromClient(reports) }))

	var events [2][]*structs.TaskEvent
	for i, a := range in {
		got, err := s.AllocByID(nil, a.ID)
		mustNoErr(t, err)
		events[i] = got.TaskStates["web"].Events
		if !reflect.DeepEqual(got.TaskStates, want[i].TaskStates) {
			t.Fatalf("alloc %d's task states changed on the way into the store", i)
		}
	}
	for i := range 3 {
		a, b := events[0][i].Details, events[1][i].Details
		if a == nil || len(a) != 0 || reflect.ValueOf(a).UnsafePointer() != reflect.ValueOf(b).UnsafePointer() {
			t.Fatalf("event %d: empty Details are not one shared empty map (%v, %v)", i, a, b)
		}
		j, err := json.Marshal(events[0][i])
		mustNoErr(t, err)
		if !strings.Contains(string(j), `"Details":{}`) {
			t.Fatalf("event %d: a shared empty Details encodes as %s", i, j)
		}
		var back structs.TaskEvent
		mustNoErr(t, rpcx.Decode(mustEncode(t, events[0][i]), &back))
		if back.Details == nil {
			t.Fatalf("event %d: a shared empty Details decodes back as nil from msgpack", i)
		}
	}
	k0, k1 := events[0][3], events[1][3]
	if k0.Details["kill_timeout"] != "5s" || len(k0.Details) != 1 {
		t.Fatalf("an event's details were lost: %v", k0.Details)
	}
	if !sameStorage(k0.KillReason(), k1.KillReason()) {
		t.Errorf("two events' kill reason %q is stored twice", k0.KillReason())
	}
}

func mustEncode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := rpcx.Encode(v)
	mustNoErr(t, err)
	return b
}
