package nomad

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/drover-sched/drover/nomad/fsm"
	"github.com/drover-sched/drover/structs"
)

// serviceLog is a log that places and runs a1 on n1 and a2 on n2 (job
// "web") and a3 on n1 (job "batchy"), each with one registration.
func serviceLog(t *testing.T) *fsmLog {
	l := &fsmLog{t: t}
	ts := time.Unix(1700000000, 0).UTC()
	web, batchy := fsmTestJob("web"), fsmTestJob("batchy")
	l.add(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: fsmTestNode("n1")})
	l.add(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: fsmTestNode("n2")})
	l.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: web, Eval: evalFor("e1", web, structs.EvalStatusPending)})
	l.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: batchy, Eval: evalFor("e2", batchy, structs.EvalStatusPending)})
	a2 := fsmTestAlloc("a2", "n2", web, "e1")
	a2.Name = structs.AllocName("web", "web", 1)
	l.add(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocsUpdated: []*structs.Allocation{fsmTestAlloc("a1", "n1", web, "e1"), a2}, Job: web, EvalID: "e1", UpdatedAt: ts.UnixNano()})
	l.add(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocsUpdated: []*structs.Allocation{fsmTestAlloc("a3", "n1", batchy, "e2")}, Job: batchy, EvalID: "e2", UpdatedAt: ts.UnixNano()})
	var running []*structs.Allocation
	var regs []*structs.ServiceRegistration
	for _, id := range []string{"a1", "a2", "a3"} {
		running = append(running, &structs.Allocation{ID: id, ClientStatus: structs.AllocClientStatusRunning})
		regs = append(regs, &structs.ServiceRegistration{ID: "_nomad-task-" + id + "-group-web-web-http", ServiceName: "web",
			AllocID: id, Address: "10.0.0.1", Port: 8080, Tags: []string{"v1"}})
	}
	l.add(structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{Alloc: running, UpdatedAt: ts.UnixNano()})
	l.add(structs.ServiceRegistrationUpsertRequestType, &structs.ServiceRegistrationUpsertRequest{Services: regs})
	return l
}

func fsmRegAllocs(t *testing.T, f *fsm.FSM) map[string]bool {
	t.Helper()
	it, err := f.State().ServiceRegistrations(nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out[raw.(*structs.ServiceRegistration).AllocID] = true
	}
	return out
}

// Each entry that ends an alloc, or its node, or its job, takes the
// alloc's registrations with it in the same apply.
func TestFSMDeletesRegistrationsWithTheEntryThatEndsTheirAlloc(t *testing.T) {
	cases := []struct {
		name string
		add  func(l *fsmLog)
		want []string
	}{
		{"the client reports the alloc complete", func(l *fsmLog) {
			l.add(structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{
				{ID: "a1", ClientStatus: structs.AllocClientStatusComplete}}})
		}, []string{"a2", "a3"}},
		{"a user's stop asks the scheduler and keeps them", func(l *fsmLog) {
			l.add(structs.AllocStopRequestType, &structs.AllocStopRequest{AllocID: "a2", Eval: evalFor("e9", fsmTestJob("web"), structs.EvalStatusPending)})
		}, []string{"a1", "a2", "a3"}},
		{"a plan stops the alloc", func(l *fsmLog) {
			l.add(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{EvalID: "e1", UpdatedAt: 2,
				AllocsStopped: []*structs.Allocation{{ID: "a2", DesiredStatus: structs.AllocDesiredStatusStop, DesiredDescription: "alloc is being migrated"}}})
		}, []string{"a1", "a3"}},
		{"the node is marked down", func(l *fsmLog) {
			l.add(structs.NodeUpdateStatusRequestType, &structs.NodeUpdateStatusRequest{NodeID: "n1", Status: structs.NodeStatusDown, UpdatedAt: 1})
		}, []string{"a2"}},
		{"the job is purged", func(l *fsmLog) {
			l.add(structs.JobBatchDeregisterRequestType, &structs.JobBatchDeregisterRequest{
				Jobs: map[structs.NamespacedID]*structs.JobDeregisterOptions{{ID: "batchy", Namespace: "default"}: {Purge: true}}})
		}, []string{"a1", "a2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := serviceLog(t)
			tc.add(l)
			f := testFSM(t)
			l.applyTo(t, f)
			got := fsmRegAllocs(t, f)
			if len(got) != len(tc.want) {
				t.Fatalf("registrations of %v remain, want %v", got, tc.want)
			}
			for _, id := range tc.want {
				if !got[id] {
					t.Fatalf("registrations of %v remain, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestFSMSnapshotKeepsServiceRegistrations(t *testing.T) {
	f := testFSM(t)
	serviceLog(t).applyTo(t, f)
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	restored := testFSM(t)
	if err := restored.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	want, got := dumpState(t, f.State())["service_registrations"], dumpState(t, restored.State())["service_registrations"]
	if len(want) != 3 || !structs.DeepEqual(want, got) {
		t.Fatalf("restored registrations %v, want %v", got, want)
	}
}
